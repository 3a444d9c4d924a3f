# bench/forward: (fragment; its owner fills it)
