# io/sweep: the sweep NetCDF writer (fragment owned by the sweep runner; included by io/local.mk)
src_io_libns_io_a_SOURCES += src/io/ns_nc_sweep.c src/io/ns_nc_sweep.h
