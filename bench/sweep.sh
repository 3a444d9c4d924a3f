#!/bin/sh
# bench/sweep.sh: (part of make bench; its owner fills it)
exit 0
