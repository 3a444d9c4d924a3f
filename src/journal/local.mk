# journal: the checkpoint journal of a sweep -- journal.nsj and its per-rank parts, records with
# checksums, the header that pins the sweep -- on plain files; no MPI (the sweep's ranks and
# `verify` share it).
noinst_LIBRARIES += src/journal/libns_journal.a
src_journal_libns_journal_a_SOURCES = src/journal/ns_journal_log.c src/journal/ns_journal.h \
	src/journal/ns_journal_file.c src/journal/ns_journal_file_internal.h \
	src/journal/ns_journal_parts.c src/journal/ns_journal_parts_internal.h

check_PROGRAMS += tests/test_journal
tests_test_journal_SOURCES = tests/test_journal.c
tests_test_journal_CPPFLAGS = $(NS_TEST_CPP)
tests_test_journal_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_journal
