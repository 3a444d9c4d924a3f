# grid: what is swept (ns_grid: normalizers, L, N, T, eps, layers, heads, rows, ...), one plain
# type that the sweep file's configuration and `dump` fill and the plan checks, and what follows
# from it, computed once (ns_grid_derive: the Jacobian bound per T, the forward length, the
# slices' geometry), which the rows stage, the reduction and the NetCDF writer share.
noinst_LIBRARIES += src/grid/libns_grid.a
src_grid_libns_grid_a_SOURCES = src/grid/ns_grid.h \
	src/grid/ns_grid_derive.c src/grid/ns_grid_derive.h
src_grid_libns_grid_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
