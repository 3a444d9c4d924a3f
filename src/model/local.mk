# model: (module fragment; its owner lists sources and tests here)
noinst_LIBRARIES += src/model/libns_model.a
src_model_libns_model_a_SOURCES = src/model/ns_model_placeholder.c
src_model_libns_model_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
