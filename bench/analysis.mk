# bench/analysis: time the analysis of one shard's 144 heads (124M shape) on the ablation grid
# against one GPT-2 forward pass (bench/analysis.sh makes the random model).
EXTRA_PROGRAMS += bench/bench_analysis
NS_BENCH_BINS += bench/bench_analysis
bench_bench_analysis_SOURCES = bench/bench_analysis.c
bench_bench_analysis_CPPFLAGS = $(NS_BENCH_CPP)
bench_bench_analysis_LDADD = $(NS_BENCH_LIBS)
