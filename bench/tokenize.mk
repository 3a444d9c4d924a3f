# bench/tokenize: (fragment; its owner fills it)
