# sweep config: YAML schema and validation, grid expansion, corpus sharding, and the built-in
# default sweep (sweeps/quick.yaml compiled into the library). Included by src/sweep/local.mk.
src_sweep_libns_sweep_a_SOURCES += src/sweep/ns_sweep_config.c \
	src/sweep/ns_sweep_yaml.c src/sweep/ns_sweep_yaml.h src/sweep/ns_grid.c src/sweep/ns_grid.h \
	src/sweep/ns_corpus.c src/sweep/ns_corpus.h
nodist_src_sweep_libns_sweep_a_SOURCES = src/sweep/ns_sweep_default.c
BUILT_SOURCES += src/sweep/ns_sweep_default.c
CLEANFILES += src/sweep/ns_sweep_default.c
EXTRA_DIST += docs/SWEEP.md

# ns_sweep_default_yaml(): the text of sweeps/quick.yaml as a C string (written in the build tree,
# so it also works in VPATH builds and `make distcheck`).
src/sweep/ns_sweep_default.c: $(top_srcdir)/sweeps/quick.yaml $(top_srcdir)/src/sweep/config.mk
	$(AM_V_GEN)$(MKDIR_P) src/sweep && { \
	  echo '/* ns_sweep_default: generated from sweeps/quick.yaml by src/sweep/config.mk; do not edit. */'; \
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
