# sweep/verify: `normsweep archive` (pack a finished run) and `normsweep verify` (manifest,
# inputs, recomputation of sampled tasks). Fragment owned by the archive/verify helper; included
# by sweep/local.mk.
src_sweep_libns_sweep_a_SOURCES += src/sweep/ns_verify.c src/sweep/ns_verify.h \
	src/sweep/ns_run_archive.c src/sweep/ns_run_archive.h
noinst_HEADERS += src/sweep/ns_verify.h src/sweep/ns_run_archive.h
TESTS += tests/archive_verify.sh
EXTRA_DIST += tests/archive_verify.sh docs/ARCHIVE.md
