/* ns_calc: a module of the table fixture. */
