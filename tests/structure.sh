#!/bin/sh
# structure: the code keeps the shape docs/STRUCTURE.md describes -- only src/cli initialises MPI,
# handles signals, prints and exits; no function longer than 150 lines; no circle between two
# files of one module; every public function used by the program (tests/check_structure.py).
: "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON_DEBIAN:=/usr/bin/python3}"
exec "$PYTHON_DEBIAN" "$top_srcdir/tests/check_structure.py" "$top_srcdir/src" "$top_builddir/src"
