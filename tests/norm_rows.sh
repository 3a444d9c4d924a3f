#!/bin/sh
# norm_rows: every normalizer of src/norm (issue 36's six off the simplex, the alpha-entmaxes and
# today's four) on hand-made and random rows -- L = 1, ties, huge and tiny T, softpick with every
# z <= 0 (m = 0), stick-breaking with every beta rounding to 1 -- checked by
# tests/check_norm_rows.py against its own 400-digit evaluation of the published formulas:
# weights a, mass m, shape p = a / m, log p, the Jacobian's spectral norm and VJP, with the
# tolerances it states; supports, zeros and m = 0 exactly. tests/norm_rows (the driver) prints
# what the C code computes; a negative control spoils three answers and expects each caught.
# Exit 77 (skip) only when python3-mpmath or numpy is missing.
set -u
: "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON_DEBIAN:=/usr/bin/python3}"
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_norm_rows.py" "$top_builddir/tests/norm_rows"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
# Negative control: three spoiled answers (m of an empty row, a weight, a Jacobian norm) caught.
out=$("$PYTHON_DEBIAN" "$top_srcdir/tests/check_norm_rows.py" "$top_builddir/tests/norm_rows" --negative)
rc=$?
echo "$out" | tail -n 1
exit "$rc"
