# analysis: METRICS.md metrics (the normalizers they evaluate are norm's); pure functions (no I/O,
# MPI or model types).
noinst_LIBRARIES += src/analysis/libns_analysis.a
src_analysis_libns_analysis_a_SOURCES = \
	src/analysis/ns_topn.c src/analysis/ns_topn.h \
	src/analysis/ns_rng.c src/analysis/ns_rng.h \
	src/analysis/ns_metrics.c src/analysis/ns_metrics.h \
	src/analysis/ns_row.c src/analysis/ns_row.h src/analysis/ns_row_kernels_internal.h \
	src/analysis/ns_row_ref.c src/analysis/ns_row_fast.c src/analysis/ns_row_fd.c \
	src/analysis/ns_row_gram.c src/analysis/ns_row_math.c src/analysis/ns_row_math_internal.h \
	src/analysis/ns_stats.c src/analysis/ns_stats.h \
	src/analysis/ns_ks.c src/analysis/ns_ks.h \
	src/analysis/ns_reduce.c src/analysis/ns_reduce.h \
	src/analysis/ns_boot.c src/analysis/ns_boot.h \
	src/analysis/ns_boot_shard.c src/analysis/ns_boot_shard.h \
	src/analysis/ns_boot_ks.c src/analysis/ns_boot_ks.h \
	src/analysis/ns_intervals.c src/analysis/ns_intervals.h \
	src/analysis/ns_boot_units.c src/analysis/ns_boot_units.h \
	src/analysis/ns_ks_internal.h
src_analysis_libns_analysis_a_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
# Vectorized loops (elementwise only: no reassociation, no contraction into FMA, so results are
# the same whatever the vector width and on every x86-64; see docs/FORWARD.md)
src_analysis_libns_analysis_a_CFLAGS = $(AM_CFLAGS) -ftree-vectorize $(NS_VECT_CFLAGS) -fno-math-errno -ffp-contract=off

check_PROGRAMS += tests/test_analysis
tests_test_analysis_SOURCES = tests/test_analysis.c tests/ns_test_kernels.h tests/ns_test_model.h
tests_test_analysis_CPPFLAGS = $(NS_TEST_CPP)
tests_test_analysis_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_analysis

# KS test, n_crit and reductions (METRICS.md sections 5 and 9).

check_PROGRAMS += tests/test_ks tests/test_reduce
tests_test_ks_SOURCES = tests/test_ks.c
tests_test_ks_CPPFLAGS = $(NS_TEST_CPP)
tests_test_ks_LDADD = $(NS_TEST_LIBS)
tests_test_reduce_SOURCES = tests/test_reduce.c
tests_test_reduce_CPPFLAGS = $(NS_TEST_CPP)
tests_test_reduce_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_ks tests/test_reduce

# the shard bootstrap's arithmetic (docs/STATISTICS.md, "Uncertainty: the shard bootstrap")
check_PROGRAMS += tests/test_boot
tests_test_boot_SOURCES = tests/test_boot.c
tests_test_boot_CPPFLAGS = $(NS_TEST_CPP)
tests_test_boot_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_boot

# The bootstrap's units of work over ranks: the assignment, and the units' values against one process.
check_PROGRAMS += tests/test_boot_units
tests_test_boot_units_SOURCES = tests/test_boot_units.c
tests_test_boot_units_CPPFLAGS = $(NS_TEST_CPP)
tests_test_boot_units_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_boot_units

# N_s exact against a 50-digit mpmath evaluation on held-out real rows at T = 0.01 and 0.1
# (issue 12); skipped (77) only without python3-mpmath.
TESTS += tests/ns_frac_exact.sh
EXTRA_DIST += tests/ns_frac_exact.sh tests/check_ns_exact.py

# A keep_samples sweep's KS tests, n_crit, counts and statistics recomputed from its kept samples
# with scipy/numpy (issue 12).
TESTS += tests/sweep_ks_scipy.sh
EXTRA_DIST += tests/sweep_ks_scipy.sh tests/check_sweep_ks.py

# The hot loops' AVX2 and baseline clones give the same bits: the analysis also built for the
# x86-64 baseline only (-DNS_NO_CLONES), with norm's sources, and one program linked against each
# (common/ns_simd.h).
check_LIBRARIES += tests/libns_analysis_base.a
tests_libns_analysis_base_a_SOURCES = $(src_analysis_libns_analysis_a_SOURCES) $(src_norm_libns_norm_a_SOURCES)
tests_libns_analysis_base_a_CPPFLAGS = $(src_analysis_libns_analysis_a_CPPFLAGS) -DNS_NO_CLONES
tests_libns_analysis_base_a_CFLAGS = $(src_analysis_libns_analysis_a_CFLAGS)
check_PROGRAMS += tests/analysis_payload tests/analysis_payload_base
tests_analysis_payload_SOURCES = tests/analysis_payload.c tests/ns_test_model.h
tests_analysis_payload_CPPFLAGS = $(NS_TEST_CPP)
tests_analysis_payload_LDADD = $(NS_TEST_LIBS)
tests_analysis_payload_base_SOURCES = tests/analysis_payload.c tests/ns_test_model.h
tests_analysis_payload_base_CPPFLAGS = $(NS_TEST_CPP)
tests_analysis_payload_base_LDADD = src/rows/libns_rows.a src/model/libns_model.a \
	tests/libns_analysis_base.a src/common/libns_common.a $(CUNIT_LIBS) $(NS_EXT_LIBS)
TESTS += tests/simd_clones.sh
EXTRA_DIST += tests/simd_clones.sh
