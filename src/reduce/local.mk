# reduce: from the journal to reduced slices -- the results store (ns_results: where each task's
# payload lies in the journal, and the reduction of a range of slices from those payloads, the
# unit of work the sweep's ranks share at the end of a run and `verify` repeats); no MPI.
noinst_LIBRARIES += src/reduce/libns_reduce.a
src_reduce_libns_reduce_a_SOURCES = src/reduce/ns_results.c src/reduce/ns_results.h
src_reduce_libns_reduce_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
