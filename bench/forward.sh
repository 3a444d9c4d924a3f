#!/bin/sh
# bench/forward.sh: (part of make bench; its owner fills it)
exit 0
