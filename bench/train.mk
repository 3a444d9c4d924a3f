# bench/train: the trainer's step (forward + backward) against its forward and the inference
# forward on the stand-in's shape, one BLAS thread (bench_train; not part of bench/run).
EXTRA_PROGRAMS += bench/bench_train
NS_BENCH_BINS += bench/bench_train
bench_bench_train_SOURCES = bench/bench_train.c
bench_bench_train_CPPFLAGS = $(NS_BENCH_CPP)
bench_bench_train_LDADD = $(NS_BENCH_LIBS)
