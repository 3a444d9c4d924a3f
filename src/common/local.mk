# common: status codes, file helpers, locks, SHA-256, machine queries.
noinst_LIBRARIES += src/common/libns_common.a
src_common_libns_common_a_SOURCES = \
	src/common/ns_error.c src/common/ns_error.h \
	src/common/ns_file.c src/common/ns_file.h \
	src/common/ns_lock.c src/common/ns_lock.h \
	src/common/ns_sha256.c src/common/ns_sha256.h \
	src/common/ns_sys.c src/common/ns_sys.h
src_common_libns_common_a_CPPFLAGS = $(AM_CPPFLAGS) $(CRYPTO_CFLAGS)
