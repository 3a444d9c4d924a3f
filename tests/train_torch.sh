#!/bin/sh
# train_torch: the trainer's loss and gradient on a tiny model (tests/train_grad_export) against
# PyTorch autograd (tests/check_train_torch.py, Debian's python3-torch), for every normalizer a
# model may name (softmax1 and sigmoid included).
# SKIP (77) only when torch is missing.
set -u
: "${top_srcdir:?run through make check}" "${top_builddir:?}"
py=/usr/bin/python3
$py -c 'import torch' 2> /dev/null || { echo "SKIP: $py has no torch (apt-get install python3-torch)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_train_torch.XXXXXX")
trap 'rm -rf "$work"' EXIT
dirs=""
# NAME P T: P is the normalizer's parameter (ssmax's s, sigmoid's bias b)
for c in "softmax 0 1" "softmax 0 0.3" "ssmax 0.8 1" "sparsemax 0 0.5" "entmax15 0 0.7" \
         "softmax1 0 1" "softmax1 0 0.4" "sigmoid -2 1" "sigmoid -0.5 0.4"; do
  set -- $c
  d="$work/$1_$3"; mkdir "$d"
  "$top_builddir/tests/train_grad_export" "$1" "$2" "$3" 5 "$d" || { echo "FAIL: export $c"; exit 1; }
  dirs="$dirs $d"
done
$py "$top_srcdir/tests/check_train_torch.py" $dirs
