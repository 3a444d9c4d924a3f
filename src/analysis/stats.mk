# analysis/stats: KS test, n_crit and reductions (fragment; its owner fills it)
