/* ns_store: a module of the table fixture. */
