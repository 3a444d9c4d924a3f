# sweep: (module fragment; its owner lists sources and tests here)
noinst_LIBRARIES += src/sweep/libns_sweep.a
src_sweep_libns_sweep_a_SOURCES = src/sweep/ns_sweep_placeholder.c
src_sweep_libns_sweep_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
