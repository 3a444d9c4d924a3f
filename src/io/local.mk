# io: NetCDF writing (dump files here; the sweep output file through sweep.mk) and the tests of
# the dump path. The forward pass's tests are registered here too, beside the dump they feed.
noinst_LIBRARIES += src/io/libns_io.a
src_io_libns_io_a_SOURCES = src/io/ns_nc_dump.c src/io/ns_nc_dump.h
src_io_libns_io_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
noinst_HEADERS += src/io/ns_nc_dump.h
# The sweep output writer adds its sources to src_io_libns_io_a_SOURCES here.
include src/io/sweep.mk

# forward pass: sgemm forward vs a naive double reference, and vs the golden stand-in files
check_PROGRAMS += tests/test_forward
tests_test_forward_SOURCES = tests/test_forward.c
tests_test_forward_CPPFLAGS = $(NS_TEST_CPP)
tests_test_forward_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_forward

# `normsweep dump` against the golden files: tests/nc_compare compares two dump files
check_PROGRAMS += tests/nc_compare
tests_nc_compare_SOURCES = tests/nc_compare.c
tests_nc_compare_CPPFLAGS = $(NS_TEST_CPP)
tests_nc_compare_LDADD = $(NETCDF_LIBS) -lm
TESTS += tests/dump_golden.sh
EXTRA_DIST += tests/dump_golden.sh
include src/io/archive.mk

# `normsweep dump --N ...` (per-row metrics): recomputed in numpy by tests/check_dump_metrics.py
TESTS += tests/dump_metrics.sh
EXTRA_DIST += tests/dump_metrics.sh tests/check_dump_metrics.py
