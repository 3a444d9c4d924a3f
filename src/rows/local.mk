# rows: the rows stage: the plan (grid, its checks, the payload layout) and the runner that turns
# one window of tokens into every planned row's metrics (forward pass + analysis). The sweep's
# tasks, `dump` and `verify` all go through it.
noinst_LIBRARIES += src/rows/libns_rows.a
src_rows_libns_rows_a_SOURCES = src/rows/ns_plan.c src/rows/ns_plan.h \
	src/rows/ns_rows.c src/rows/ns_rows.h
src_rows_libns_rows_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
