# io: NetCDF: the generic writer, the provenance attributes, the sweep output layout, the dump
# layout, reading files back and checking one against its layout (verify, archive). Only io
# talks NetCDF.
noinst_LIBRARIES += src/io/libns_io.a
src_io_libns_io_a_SOURCES = src/io/ns_nc_write.c src/io/ns_nc_write.h src/io/ns_nc.c src/io/ns_nc_internal.h \
	src/io/ns_hdf5.c src/io/ns_hdf5.h \
	src/io/ns_provenance.c src/io/ns_provenance.h \
	src/io/ns_nc_results.c src/io/ns_nc_results.h src/io/ns_nc_results_internal.h \
	src/io/ns_nc_results_compare.c src/io/ns_nc_results_compare.h \
	src/io/ns_nc_intervals.c src/io/ns_nc_intervals.h \
	src/io/ns_nc_dump.c src/io/ns_nc_dump.h \
	src/io/ns_nc_read.c src/io/ns_nc_read.h \
	src/io/ns_nc_check.c src/io/ns_nc_check.h
src_io_libns_io_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)

# `normsweep dump` against the golden files: tests/nc_compare compares two dump files
check_PROGRAMS += tests/nc_compare
tests_nc_compare_SOURCES = tests/nc_compare.c
tests_nc_compare_CPPFLAGS = $(NS_TEST_CPP)
tests_nc_compare_LDADD = $(NETCDF_LIBS) -lm
TESTS += tests/dump_golden.sh
EXTRA_DIST += tests/dump_golden.sh

# `normsweep dump --N ...` (per-row metrics): recomputed in numpy by tests/check_dump_metrics.py
TESTS += tests/dump_metrics.sh
EXTRA_DIST += tests/dump_metrics.sh tests/check_dump_metrics.py
