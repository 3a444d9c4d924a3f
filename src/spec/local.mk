# spec: the sweep file -- the generic YAML typing (ns_yaml), the schema (ns_sweep_yaml), defaults,
# checks, diagnostics, the files it names (inputs), campaign files (ns_campaign) -- and the
# built-in default sweep. No MPI: `validate`, `dump`, `verify` and the sweep's rank 0 read a sweep
# through it.
noinst_LIBRARIES += src/spec/libns_spec.a
src_spec_libns_spec_a_SOURCES = src/spec/ns_sweep_config.c src/spec/ns_sweep_config.h \
	src/spec/ns_sweep_diag.c src/spec/ns_sweep_diag.h \
	src/spec/ns_list.c src/spec/ns_list.h \
	src/spec/ns_yaml.c src/spec/ns_yaml.h src/spec/ns_sweep_yaml.c src/spec/ns_sweep_yaml.h \
	src/spec/ns_sweep_check.c src/spec/ns_sweep_check.h \
	src/spec/ns_sweep_inputs.c src/spec/ns_sweep_inputs.h \
	src/spec/ns_campaign.c src/spec/ns_campaign.h
src_spec_libns_spec_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
nodist_src_spec_libns_spec_a_SOURCES = src/spec/ns_sweep_default.c
BUILT_SOURCES += src/spec/ns_sweep_default.c
CLEANFILES += src/spec/ns_sweep_default.c
EXTRA_DIST += docs/SWEEP.md

# ns_sweep_default_yaml(): the text of sweeps/quick.yaml as a C string (written in the build tree,
# so it also works in VPATH builds and `make distcheck`).
src/spec/ns_sweep_default.c: $(top_srcdir)/sweeps/quick.yaml $(top_srcdir)/src/spec/local.mk
	$(AM_V_GEN)$(MKDIR_P) src/spec && { \
	  echo '/* ns_sweep_default: generated from sweeps/quick.yaml by src/spec/local.mk; do not edit. */'; \
	  echo '#include "spec/ns_sweep_yaml.h"'; \
	  echo 'static const char ns_sweep_default_text[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $(top_srcdir)/sweeps/quick.yaml; \
	  echo '    "";'; \
	  echo 'const char *ns_sweep_default_yaml(void) { return ns_sweep_default_text; }'; \
	} > $@-t && mv -f $@-t $@

# the parser, the checks and the inputs (test_sweep_config); `normsweep validate` (validate_cli.sh)
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
