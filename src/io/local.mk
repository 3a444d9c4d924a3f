# io: (module fragment; its owner lists sources and tests here)
noinst_LIBRARIES += src/io/libns_io.a
src_io_libns_io_a_SOURCES = src/io/ns_io_placeholder.c
src_io_libns_io_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
