# bench/sweep: (fragment; its owner fills it)
