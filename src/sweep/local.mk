# sweep: the MPI sweep on a communicator the caller initialised: setup and broadcast of the sweep
# (read through spec/), the master/worker task loop, progress, and the end-of-run reduction shared
# by every rank (the results store it reduces from is reduce/'s).
noinst_LIBRARIES += src/sweep/libns_sweep.a
src_sweep_libns_sweep_a_SOURCES = \
	src/sweep/ns_sweep_run.c src/sweep/ns_sweep.h src/sweep/ns_sweep_ctx.c src/sweep/ns_sweep_ctx.h \
	src/sweep/ns_sweep_prepare.c src/sweep/ns_sweep_prepare.h \
	src/sweep/ns_sweep_master.c src/sweep/ns_sweep_master.h \
	src/sweep/ns_sweep_worker.c src/sweep/ns_sweep_worker.h \
	src/sweep/ns_sweep_reduce.c src/sweep/ns_sweep_reduce.h \
	src/sweep/ns_sweep_share.c src/sweep/ns_sweep_share.h \
	src/sweep/ns_sweep_boot.c src/sweep/ns_sweep_boot.h src/sweep/ns_sweep_spread.c src/sweep/ns_sweep_spread.h \
	src/sweep/ns_sweep_mpi.c src/sweep/ns_sweep_mpi.h
src_sweep_libns_sweep_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)

# tests of the sweep runner
TESTS += tests/sweep_determinism.sh tests/sweep_resume.sh tests/sweep_invalid.sh \
	tests/sweep_vs_dump.sh tests/sweep_trust.sh tests/sweep_unshared.sh tests/output_cf.sh
EXTRA_DIST += tests/sweep_common.sh tests/hold.sh tests/sweep_determinism.sh tests/sweep_resume.sh \
	tests/sweep_invalid.sh tests/sweep_vs_dump.sh tests/sweep_trust.sh tests/sweep_unshared.sh \
	tests/output_cf.sh \
	tests/check_cf.py
# the bootstrap intervals: rank-independent, equal to the Python reference, read by the report
TESTS += tests/sweep_intervals.sh
EXTRA_DIST += tests/sweep_intervals.sh tests/check_intervals_c.py
# the file as an xarray user reads it: docs/OUTPUT.md's example, by name, counts, n_crit, layouts
TESTS += tests/output_xarray.sh
EXTRA_DIST += tests/output_xarray.sh tests/check_xarray.py tests/layout1.py
EXTRA_DIST += docs/RUNNING.md

