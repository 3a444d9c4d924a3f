# analysis/stats: KS test, n_crit and reductions (METRICS.md sections 5 and 8).
src_analysis_libns_analysis_a_SOURCES += src/analysis/ns_ks.c src/analysis/ns_ks.h \
	src/analysis/ns_reduce.c src/analysis/ns_reduce.h

check_PROGRAMS += tests/test_ks tests/test_reduce
tests_test_ks_SOURCES = tests/test_ks.c
tests_test_ks_CPPFLAGS = $(NS_TEST_CPP)
tests_test_ks_LDADD = $(NS_TEST_LIBS)
tests_test_reduce_SOURCES = tests/test_reduce.c
tests_test_reduce_CPPFLAGS = $(NS_TEST_CPP)
tests_test_reduce_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_ks tests/test_reduce
