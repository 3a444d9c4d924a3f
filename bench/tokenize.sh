#!/bin/sh
# bench/tokenize.sh: (part of make bench; its owner fills it)
exit 0
