# tests: one CUnit program per module plus shell tests for the CLI and MPI runs.
# Assets (tokenizer, corpus, stand-in model, golden outputs) are fetched before the tests run.
NS_TEST_CPP = $(AM_CPPFLAGS) -I$(top_srcdir)/tests $(NS_EXT_CFLAGS) $(CUNIT_CFLAGS)
NS_TEST_LIBS = $(NS_LIBS) $(CUNIT_LIBS) $(NS_EXT_LIBS)
EXTRA_DIST += tests/test_env.sh tests/ns_test.h tests/ns_test_ref.h tests/data

# the code's structural rules (docs/STRUCTURE.md), today's known breaches (which only shrink),
# and the checker's own test on planted breaches (tests/data/structure)
TESTS += tests/structure.sh tests/structure_selftest.sh
EXTRA_DIST += tests/structure.sh tests/check_structure.py tests/structure_known.txt \
	tests/structure_selftest.sh

# bench/run's verdict lines: every target line of a part counted and re-judged, whatever its name
TESTS += tests/bench_run.sh
EXTRA_DIST += tests/bench_run.sh

check_PROGRAMS += tests/test_common
tests_test_common_SOURCES = tests/test_common.c
tests_test_common_CPPFLAGS = $(NS_TEST_CPP)
tests_test_common_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_common

# nc_datadump: canonical digest of a NetCDF file's data (no global attributes), used by the
# determinism, resume and Slurm tests to compare runs byte for byte.
check_PROGRAMS += tests/nc_datadump
tests_nc_datadump_SOURCES = tests/nc_datadump.c
tests_nc_datadump_CPPFLAGS = $(NS_TEST_CPP)
tests_nc_datadump_LDADD = src/common/libns_common.a $(NS_EXT_LIBS)

# The Slurm test starts real daemons and takes minutes: run by `make check-slurm` (and .ci/run).
EXTRA_DIST += tests/slurm/local_cluster.sh tests/slurm/test_slurm.sh tests/slurm/slurm_small.yaml
check-slurm: normsweep tests/nc_datadump assets.stamp
	@$(AM_TESTS_ENVIRONMENT) bash $(top_srcdir)/tests/slurm/test_slurm.sh
.PHONY: check-slurm
