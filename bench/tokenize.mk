# bench/tokenize: time GPT-2 tokenization of the whole corpus (bench/tokenize.sh runs it).
EXTRA_PROGRAMS += bench/bench_tokenize
NS_BENCH_BINS += bench/bench_tokenize
bench_bench_tokenize_SOURCES = bench/bench_tokenize.c
bench_bench_tokenize_CPPFLAGS = $(NS_BENCH_CPP)
bench_bench_tokenize_LDADD = $(NS_BENCH_LIBS)
