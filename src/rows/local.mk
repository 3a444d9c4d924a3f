# rows: the rows stage: the plan (grid, its checks, the payload layout) and the runner that turns
# one window of tokens into every planned row's metrics (forward pass + analysis). The sweep's
# tasks, `dump` and `verify` all go through it.
noinst_LIBRARIES += src/rows/libns_rows.a
src_rows_libns_rows_a_SOURCES = src/rows/ns_plan.c src/rows/ns_plan.h \
	src/rows/ns_rows.c src/rows/ns_rows.h
src_rows_libns_rows_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)

# The plan and the runner (tiny random model): tests/test_rows.c
check_PROGRAMS += tests/test_rows
tests_test_rows_SOURCES = tests/test_rows.c tests/ns_test_kernels.h tests/ns_test_model.h
tests_test_rows_CPPFLAGS = $(NS_TEST_CPP)
tests_test_rows_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_rows
