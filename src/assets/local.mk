# assets: (module fragment; its owner lists sources and tests here)
noinst_LIBRARIES += src/assets/libns_assets.a
src_assets_libns_assets_a_SOURCES = src/assets/ns_assets_placeholder.c
src_assets_libns_assets_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
