# common: status codes, file helpers, locks, SHA-256, machine queries, the data directory, the
# CBLAS's identity and threads (ns_blas).
noinst_LIBRARIES += src/common/libns_common.a
src_common_libns_common_a_SOURCES = \
	src/common/ns_error.c src/common/ns_error.h \
	src/common/ns_file.c src/common/ns_file.h \
	src/common/ns_lock.c src/common/ns_lock.h \
	src/common/ns_sha256.c src/common/ns_sha256.h \
	src/common/ns_sys.c src/common/ns_sys.h \
	src/common/ns_datadir.c src/common/ns_datadir.h \
	src/common/ns_blas.c src/common/ns_blas.h
# ns_datadir: the installed data directory and the source and build trees, compiled in.
src_common_libns_common_a_CPPFLAGS = $(AM_CPPFLAGS) $(CRYPTO_CFLAGS) $(BLAS_CFLAGS) \
	-DNS_ABS_TOP_SRCDIR='"$(abs_top_srcdir)"' -DNS_ABS_TOP_BUILDDIR='"$(abs_top_builddir)"' \
	-DNS_PKGDATADIR='"$(pkgdatadir)"'

