# archive: reproducibility archives: tar.gz with a SHA-256 manifest (ns_archive), packing a
# finished run (ns_run_archive, `normsweep archive`) and verifying one (ns_verify,
# `normsweep verify`: manifest, inputs, recomputed tasks).
noinst_LIBRARIES += src/archive/libns_archive.a
src_archive_libns_archive_a_SOURCES = src/archive/ns_archive.c src/archive/ns_archive.h \
	src/archive/ns_archive_check.c src/archive/ns_archive_check.h \
	src/archive/ns_archive_layout.h \
	src/archive/ns_archive_provenance.c src/archive/ns_archive_provenance.h \
	src/archive/ns_archive_readme.c src/archive/ns_archive_readme.h \
	src/archive/ns_run_files.c src/archive/ns_run_files.h \
	src/archive/ns_run_archive.c src/archive/ns_run_archive.h \
	src/archive/ns_verify_report.c src/archive/ns_verify_report.h \
	src/archive/ns_verify_members.c src/archive/ns_verify_members.h \
	src/archive/ns_verify_inputs.c src/archive/ns_verify_inputs.h \
	src/archive/ns_verify_attrs.c src/archive/ns_verify_attrs.h \
	src/archive/ns_verify.c src/archive/ns_verify.h
src_archive_libns_archive_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)

# archive writing/extraction round trip, manifest check and tamper detection
check_PROGRAMS += tests/test_archive
tests_test_archive_SOURCES = tests/test_archive.c
tests_test_archive_CPPFLAGS = $(NS_TEST_CPP)
tests_test_archive_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_archive tests/archive_verify.sh tests/archive_forge.sh
EXTRA_DIST += tests/archive_verify.sh tests/archive_forge.sh tests/archive_reseal.py docs/ARCHIVE.md
