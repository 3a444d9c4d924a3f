# sweep: the sweep file (YAML schema, defaults, validation, grid), the built-in default sweep, and
# the MPI sweep: setup and broadcast, the master/worker task loop, journal, progress, and the
# end-of-run reduction shared by every rank.
noinst_LIBRARIES += src/sweep/libns_sweep.a
src_sweep_libns_sweep_a_SOURCES = src/sweep/ns_sweep_config.c src/sweep/ns_sweep_config.h \
	src/sweep/ns_sweep_diag.c src/sweep/ns_sweep_diag.h \
	src/sweep/ns_sweep_yaml.c src/sweep/ns_sweep_yaml.h \
	src/sweep/ns_sweep_check.c src/sweep/ns_sweep_check.h \
	src/sweep/ns_sweep_inputs.c src/sweep/ns_sweep_inputs.h \
	src/sweep/ns_campaign.c src/sweep/ns_campaign.h \
	src/sweep/ns_results.c src/sweep/ns_results.h \
	src/sweep/ns_sweep.c src/sweep/ns_sweep.h src/sweep/ns_sweep_internal.h \
	src/sweep/ns_sweep_prepare.c src/sweep/ns_sweep_master.c src/sweep/ns_sweep_worker.c \
	src/sweep/ns_sweep_reduce.c src/sweep/ns_sweep_boot.c src/sweep/ns_sweep_boot.h src/sweep/ns_sweep_spread.c src/sweep/ns_sweep_spread.h src/sweep/ns_sweep_mpi.c src/sweep/ns_sweep_mpi.h src/sweep/ns_sweep_share.c
src_sweep_libns_sweep_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
nodist_src_sweep_libns_sweep_a_SOURCES = src/sweep/ns_sweep_default.c
BUILT_SOURCES += src/sweep/ns_sweep_default.c
CLEANFILES += src/sweep/ns_sweep_default.c
EXTRA_DIST += docs/SWEEP.md

# ns_sweep_default_yaml(): the text of sweeps/quick.yaml as a C string (written in the build tree,
# so it also works in VPATH builds and `make distcheck`).
src/sweep/ns_sweep_default.c: $(top_srcdir)/sweeps/quick.yaml $(top_srcdir)/src/sweep/local.mk
	$(AM_V_GEN)$(MKDIR_P) src/sweep && { \
	  echo '/* ns_sweep_default: generated from sweeps/quick.yaml by src/sweep/local.mk; do not edit. */'; \
	  echo '#include "sweep/ns_sweep_yaml.h"'; \
	  echo 'static const char ns_sweep_default_text[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $(top_srcdir)/sweeps/quick.yaml; \
	  echo '    "";'; \
	  echo 'const char *ns_sweep_default_yaml(void) { return ns_sweep_default_text; }'; \
	} > $@-t && mv -f $@-t $@

check_PROGRAMS += tests/test_sweep_config
tests_test_sweep_config_SOURCES = tests/test_sweep_config.c
tests_test_sweep_config_CPPFLAGS = $(NS_TEST_CPP)
tests_test_sweep_config_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_sweep_config tests/validate_cli.sh
EXTRA_DIST += tests/validate_cli.sh
# campaign files: the parser (test_campaign); validate, run, resume, the side-by-side report
# (campaign.sh; docs/SWEEP.md, "Campaigns")
check_PROGRAMS += tests/test_campaign
tests_test_campaign_SOURCES = tests/test_campaign.c
tests_test_campaign_CPPFLAGS = $(NS_TEST_CPP)
tests_test_campaign_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_campaign tests/campaign.sh
EXTRA_DIST += tests/campaign.sh

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

