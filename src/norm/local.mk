# norm: attention normalizers (values, log-weights) and their Jacobians (exact norm, VJP,
# Lemma 2's bound); pure functions (no I/O, MPI or model types), used by model, train and analysis.
noinst_LIBRARIES += src/norm/libns_norm.a
src_norm_libns_norm_a_SOURCES = \
	src/norm/ns_normalize.c src/norm/ns_normalize.h src/norm/ns_normalize_internal.h \
	src/norm/ns_jacobian.c src/norm/ns_jacobian.h src/norm/ns_jacobian_internal.h \
	src/norm/ns_norm_row.c src/norm/ns_norm_row.h \
	src/norm/ns_norm_jac.c src/norm/ns_norm_jac.h src/norm/ns_norm_jac_internal.h \
	src/norm/ns_norm_math_internal.h
src_norm_libns_norm_a_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
# The same flags as analysis (src/analysis/local.mk): vectorized elementwise loops, no
# reassociation, no contraction into FMA, so the bits are those of every x86-64.
src_norm_libns_norm_a_CFLAGS = $(AM_CFLAGS) -ftree-vectorize $(NS_VECT_CFLAGS) -fno-math-errno -ffp-contract=off

check_PROGRAMS += tests/test_normalize
tests_test_normalize_SOURCES = tests/test_normalize.c
tests_test_normalize_CPPFLAGS = $(NS_TEST_CPP)
tests_test_normalize_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_normalize

# Issue 36's normalizers (ns_norm_row, ns_norm_jac) against tests/check_norm_rows.py's 100-digit
# evaluation of the published formulas; tests/norm_rows is its driver.
check_PROGRAMS += tests/norm_rows
tests_norm_rows_SOURCES = tests/norm_rows.c
tests_norm_rows_CPPFLAGS = $(NS_TEST_CPP)
tests_norm_rows_LDADD = $(NS_TEST_LIBS)
TESTS += tests/norm_rows.sh
EXTRA_DIST += tests/norm_rows.sh tests/check_norm_rows.py

# Issue 36's normalizers in dump (tests/check_dump_norms.py recomputes every metric from the
# published formulas) and in a sweep over all ten (tests/check_sweep_norms.py, archive, verify).
TESTS += tests/dump_norms.sh tests/sweep_norms.sh
EXTRA_DIST += tests/dump_norms.sh tests/check_dump_norms.py tests/sweep_norms.sh \
	tests/check_sweep_norms.py

# Issue 36's sink-excluded view (docs/METRICS.md 8.2): in dump (check_dump_norms.py recomputes it
# from the formulas) and in a `sink_view: true` sweep (check_sweep_norms.py views; the listed
# normalizers equal a sink_view: false run's bytes).
TESTS += tests/dump_view.sh tests/sweep_view.sh
EXTRA_DIST += tests/dump_view.sh tests/sweep_view.sh
