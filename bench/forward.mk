# bench/forward: the forward pass at L=1024 on a 124M-shaped model vs an sgemm-only loop of the
# same GEMM shapes, plus its private memory beyond the weights (run by bench/forward.sh).
EXTRA_PROGRAMS += bench/bench_forward
NS_BENCH_BINS += bench/bench_forward
bench_bench_forward_SOURCES = bench/bench_forward.c
bench_bench_forward_CPPFLAGS = $(NS_BENCH_CPP)
bench_bench_forward_LDADD = $(NS_BENCH_LIBS)
