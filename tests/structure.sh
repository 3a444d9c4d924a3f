#!/bin/sh
# structure: the code keeps the shape docs/STRUCTURE.md describes -- only src/cli initialises MPI,
# handles signals, prints and exits; no function longer than 150 lines; no circle of any length
# inside a module; includes across modules only along the modules table; no foreign private
# header; no .c over 800 lines; libraries and single texts only in their homes; every public
# function used by the program (tests/check_structure.py). Today's breaches are listed in
# tests/structure_known.txt, which only shrinks.
: "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON_DEBIAN:=/usr/bin/python3}"
exec "$PYTHON_DEBIAN" "$top_srcdir/tests/check_structure.py" --doc "$top_srcdir/docs/STRUCTURE.md" \
  --known "$top_srcdir/tests/structure_known.txt" "$top_srcdir/src" "$top_builddir/src"
