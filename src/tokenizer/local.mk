# tokenizer: byte-level BPE from GPT-2's files or a Hugging Face tokenizer.json (loading, PCRE2
# pre-tokenizers, utf8proc normalizers, added tokens, BPE, cache).
noinst_LIBRARIES += src/tokenizer/libns_tokenizer.a
src_tokenizer_libns_tokenizer_a_SOURCES = src/tokenizer/ns_tokenizer.h \
	src/tokenizer/ns_tokenizer_internal.h src/tokenizer/ns_bpe.h src/tokenizer/ns_tokenizer.c \
	src/tokenizer/ns_pretok.c src/tokenizer/ns_bpe.c src/tokenizer/ns_wordcache.h \
	src/tokenizer/ns_wordcache.c src/tokenizer/ns_hf.h src/tokenizer/ns_hf_load.c \
	src/tokenizer/ns_hf_config.c src/tokenizer/ns_hf_added.c src/tokenizer/ns_hf_encode.c
src_tokenizer_libns_tokenizer_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)

check_PROGRAMS += tests/test_tokenizer
tests_test_tokenizer_SOURCES = tests/test_tokenizer.c
tests_test_tokenizer_CPPFLAGS = $(NS_TEST_CPP)
tests_test_tokenizer_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_tokenizer tests/tokenize_cli.sh tests/tokenizer_hf.sh tests/tokenizer_ref.sh
EXTRA_DIST += tests/tokenize_cli.sh tests/tokenizer_hf.sh tests/tokenizer_ref.sh tests/tokref

# tok_batch: encode a JSON array of strings with one loaded tokenizer (the tokenizer.json tests)
check_PROGRAMS += tests/tok_batch
tests_tok_batch_SOURCES = tests/tok_batch.c
tests_tok_batch_CPPFLAGS = $(NS_TEST_CPP)
tests_tok_batch_LDADD = $(NS_TEST_LIBS)
