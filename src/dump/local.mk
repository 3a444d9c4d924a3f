# dump: `normsweep dump` as one library function -- ns_dump_run: one window of a text through the
# corpus and rows stages into NetCDF (docs/DUMP.md).
noinst_LIBRARIES += src/dump/libns_dump.a
src_dump_libns_dump_a_SOURCES = src/dump/ns_dump_run.c src/dump/ns_dump_run.h
src_dump_libns_dump_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
