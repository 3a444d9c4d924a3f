# corpus: reading and checking the corpus text (UTF-8), stripping the Project Gutenberg header and
# licence, tokenizing it once, and the shard boundaries of the token stream.
noinst_LIBRARIES += src/corpus/libns_corpus.a
src_corpus_libns_corpus_a_SOURCES = src/corpus/ns_corpus.c src/corpus/ns_corpus.h
src_corpus_libns_corpus_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
