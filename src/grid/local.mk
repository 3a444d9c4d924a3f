# grid: what is swept (ns_grid: normalizers, L, N, T, eps, layers, heads, rows, ...), one plain
# type that the sweep file's configuration and `dump` fill and the plan checks.
noinst_HEADERS += src/grid/ns_grid.h
