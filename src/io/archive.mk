# io/archive: tar.gz reproducibility archives with a SHA-256 manifest, and reading a sweep file's
# provenance attributes (fragment owned by the archive/verify helper; included by io/local.mk).
src_io_libns_io_a_SOURCES += src/io/ns_archive.c src/io/ns_archive.h \
	src/io/ns_nc_read.c src/io/ns_nc_read.h
noinst_HEADERS += src/io/ns_archive.h src/io/ns_nc_read.h

# archive writing/extraction round trip, manifest check and tamper detection, NetCDF attributes
check_PROGRAMS += tests/test_archive
tests_test_archive_SOURCES = tests/test_archive.c
tests_test_archive_CPPFLAGS = $(NS_TEST_CPP)
tests_test_archive_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_archive
