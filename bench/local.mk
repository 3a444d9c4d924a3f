# bench: `make bench` builds the benchmark programs and runs bench/run, which runs each
# bench/*.sh part in order and ends with one `name: value` line per figure.
EXTRA_PROGRAMS =
NS_BENCH_BINS =
NS_BENCH_CPP = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
NS_BENCH_LIBS = $(NS_TEST_LIBS)
include bench/tokenize.mk
include bench/forward.mk
include bench/analysis.mk
include bench/sweep.mk
include bench/train.mk
EXTRA_DIST += bench/ns_bench.h bench/run bench/verdict.sh bench/README.md bench/tokenize.sh bench/forward.sh bench/analysis.sh bench/sweep.sh bench/grid.sh bench/bootstrap.sh \
	bench/long.sh bench/long_context.yaml \
	bench/train_torch_step.py
CLEANFILES += $(EXTRA_PROGRAMS)

bench: normsweep $(NS_BENCH_BINS) assets.stamp
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	NORMSWEEP='$(abs_top_builddir)/normsweep' MPIEXEC='$(MPIEXEC)' \
	$(SHELL) $(top_srcdir)/bench/run
.PHONY: bench
