# postprocess: (fragment; its owner fills it)
