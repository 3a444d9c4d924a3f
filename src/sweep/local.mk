# sweep: YAML config (config.mk, owned by the sweep config helper) and the MPI sweep runner:
# tasks, journal, progress, results/reductions.
noinst_LIBRARIES += src/sweep/libns_sweep.a
src_sweep_libns_sweep_a_SOURCES = src/sweep/ns_sweep_config.h \
	src/sweep/ns_sweep_run.c src/sweep/ns_sweep_run.h src/sweep/ns_task.c src/sweep/ns_task.h \
	src/sweep/ns_journal.c src/sweep/ns_journal.h src/sweep/ns_progress.c src/sweep/ns_progress.h \
	src/sweep/ns_results.c src/sweep/ns_results.h
src_sweep_libns_sweep_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
include src/sweep/config.mk

# tests of the sweep runner
check_PROGRAMS += tests/test_journal
tests_test_journal_SOURCES = tests/test_journal.c
tests_test_journal_CPPFLAGS = $(NS_TEST_CPP)
tests_test_journal_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_journal
TESTS += tests/sweep_determinism.sh tests/sweep_resume.sh tests/sweep_invalid.sh \
	tests/sweep_vs_dump.sh
EXTRA_DIST += tests/sweep_common.sh tests/sweep_determinism.sh tests/sweep_resume.sh \
	tests/sweep_invalid.sh tests/sweep_vs_dump.sh
include src/sweep/verify.mk
EXTRA_DIST += docs/RUNNING.md
