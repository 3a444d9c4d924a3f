# norm: attention normalizers (values, log-weights) and their Jacobians (exact norm, VJP,
# Lemma 2's bound); pure functions (no I/O, MPI or model types), used by model, train and analysis.
noinst_LIBRARIES += src/norm/libns_norm.a
src_norm_libns_norm_a_SOURCES = \
	src/norm/ns_normalize.c src/norm/ns_normalize.h src/norm/ns_normalize_internal.h \
	src/norm/ns_jacobian.c src/norm/ns_jacobian.h src/norm/ns_jacobian_internal.h \
	src/norm/ns_norm_row.c src/norm/ns_norm_row_internal.h \
	src/norm/ns_norm_jac.c src/norm/ns_norm_jac_internal.h src/norm/ns_norm_math_internal.h
src_norm_libns_norm_a_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
# The same flags as analysis (src/analysis/local.mk): vectorized elementwise loops, no
# reassociation, no contraction into FMA, so the bits are those of every x86-64.
src_norm_libns_norm_a_CFLAGS = $(AM_CFLAGS) -ftree-vectorize $(NS_VECT_CFLAGS) -fno-math-errno -ffp-contract=off

check_PROGRAMS += tests/test_normalize
tests_test_normalize_SOURCES = tests/test_normalize.c
tests_test_normalize_CPPFLAGS = $(NS_TEST_CPP)
tests_test_normalize_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_normalize
