# tokenizer: (module fragment; its owner lists sources and tests here)
noinst_LIBRARIES += src/tokenizer/libns_tokenizer.a
src_tokenizer_libns_tokenizer_a_SOURCES = src/tokenizer/ns_tokenizer_placeholder.c
src_tokenizer_libns_tokenizer_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
