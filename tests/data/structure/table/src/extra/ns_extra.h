/* ns_extra: a module of the table fixture. */
