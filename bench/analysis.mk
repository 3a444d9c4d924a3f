# bench/analysis: (fragment; its owner fills it)
