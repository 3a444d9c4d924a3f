/* ns_cli: a module of the table fixture. */
