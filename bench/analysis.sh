#!/bin/sh
# bench/analysis.sh: (part of make bench; its owner fills it)
exit 0
