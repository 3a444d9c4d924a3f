# hardening: fuzz regression replays in `make check`, and `make check-valgrind` (the CUnit
# programs and the replays under valgrind memcheck). Sanitizer builds: scripts/check-sanitizers;
# fuzzing: scripts/fuzz. See docs/RELIABILITY.md.

# Each fuzz target linked with fuzz/fuzz_driver.c (a plain main, normal compiler): with no
# arguments it replays fuzz/corpus/<parser>/ and fuzz/regressions/<parser>/ from $top_srcdir.
# Each replay links its fuzz target's own library list (FUZZ_LIBS_*, fuzz/local.mk), not all of
# NS_LIBS: a list that misses a library breaks this build too.
FUZZ_REPLAY_CPP = $(NS_TEST_CPP)
check_PROGRAMS += fuzz/replay_tokenizer fuzz/replay_tokenizer_json fuzz/replay_safetensors fuzz/replay_config \
	fuzz/replay_sweep_yaml fuzz/replay_nc_read fuzz/replay_archive fuzz/replay_manifest \
	fuzz/replay_train_grid
TESTS += fuzz/replay_tokenizer fuzz/replay_tokenizer_json fuzz/replay_safetensors fuzz/replay_config fuzz/replay_sweep_yaml \
	fuzz/replay_nc_read fuzz/replay_archive fuzz/replay_manifest fuzz/replay_train_grid
fuzz_replay_tokenizer_SOURCES = fuzz/fuzz_driver.c fuzz/fuzz_tokenizer.c fuzz/ns_fuzz.h
fuzz_replay_tokenizer_CPPFLAGS = $(FUZZ_REPLAY_CPP) -DNS_FUZZ_NAME='"tokenizer"'
fuzz_replay_tokenizer_LDADD = $(FUZZ_LIBS_TOKENIZER) $(NS_EXT_LIBS) $(LIBS)
fuzz_replay_tokenizer_json_SOURCES = fuzz/fuzz_driver.c fuzz/fuzz_tokenizer_json.c fuzz/ns_fuzz.h
fuzz_replay_tokenizer_json_CPPFLAGS = $(FUZZ_REPLAY_CPP) -DNS_FUZZ_NAME='"tokenizer_json"'
fuzz_replay_tokenizer_json_LDADD = $(FUZZ_LIBS_TOKENIZER) $(NS_EXT_LIBS) $(LIBS)
fuzz_replay_safetensors_SOURCES = fuzz/fuzz_driver.c fuzz/fuzz_safetensors.c fuzz/ns_fuzz.h
fuzz_replay_safetensors_CPPFLAGS = $(FUZZ_REPLAY_CPP) -DNS_FUZZ_NAME='"safetensors"'
fuzz_replay_safetensors_LDADD = $(FUZZ_LIBS_MODEL) $(NS_EXT_LIBS) $(LIBS)
fuzz_replay_config_SOURCES = fuzz/fuzz_driver.c fuzz/fuzz_config.c fuzz/ns_fuzz.h
fuzz_replay_config_CPPFLAGS = $(FUZZ_REPLAY_CPP) -DNS_FUZZ_NAME='"config"'
fuzz_replay_config_LDADD = $(FUZZ_LIBS_MODEL) $(NS_EXT_LIBS) $(LIBS)
fuzz_replay_sweep_yaml_SOURCES = fuzz/fuzz_driver.c fuzz/fuzz_sweep_yaml.c fuzz/ns_fuzz.h
fuzz_replay_sweep_yaml_CPPFLAGS = $(FUZZ_REPLAY_CPP) -DNS_FUZZ_NAME='"sweep_yaml"'
fuzz_replay_sweep_yaml_LDADD = $(FUZZ_LIBS_SWEEP) $(NS_EXT_LIBS) $(LIBS)
fuzz_replay_nc_read_SOURCES = fuzz/fuzz_driver.c fuzz/fuzz_nc_read.c fuzz/ns_fuzz.h
fuzz_replay_nc_read_CPPFLAGS = $(FUZZ_REPLAY_CPP) -DNS_FUZZ_NAME='"nc_read"'
fuzz_replay_nc_read_LDADD = $(FUZZ_LIBS_IO) $(NS_EXT_LIBS) $(LIBS)
fuzz_replay_archive_SOURCES = fuzz/fuzz_driver.c fuzz/fuzz_archive.c fuzz/ns_fuzz.h
fuzz_replay_archive_CPPFLAGS = $(FUZZ_REPLAY_CPP) -DNS_FUZZ_NAME='"archive"'
fuzz_replay_archive_LDADD = $(FUZZ_LIBS_ARCHIVE) $(NS_EXT_LIBS) $(LIBS)
fuzz_replay_manifest_SOURCES = fuzz/fuzz_driver.c fuzz/fuzz_manifest.c fuzz/ns_fuzz.h
fuzz_replay_manifest_CPPFLAGS = $(FUZZ_REPLAY_CPP) -DNS_FUZZ_NAME='"manifest"'
fuzz_replay_manifest_LDADD = $(FUZZ_LIBS_ARCHIVE) $(NS_EXT_LIBS) $(LIBS)
fuzz_replay_train_grid_SOURCES = fuzz/fuzz_driver.c fuzz/fuzz_train_grid.c fuzz/ns_fuzz.h
fuzz_replay_train_grid_CPPFLAGS = $(FUZZ_REPLAY_CPP) -DNS_FUZZ_NAME='"train_grid"'
fuzz_replay_train_grid_LDADD = $(FUZZ_LIBS_TRAIN_GRID) $(NS_EXT_LIBS) $(LIBS)

# check-valgrind: every CUnit program (tests/test_*) and every fuzz replay under memcheck.
# Fails on any invalid access, use of uninitialised memory or leak (definite, indirect or
# possible); one log per program in valgrind-logs/. VALGRIND_SELECT (space-separated, e.g.
# `make check-valgrind VALGRIND_SELECT=tests/test_ks`) narrows the set.
VALGRIND = valgrind
VALGRIND_FLAGS = --tool=memcheck --error-exitcode=99 --leak-check=full \
	--show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
	--num-callers=30 --suppressions=$(abs_top_srcdir)/tests/sanitizers/valgrind.supp
VALGRIND_SELECT =
EXTRA_DIST += tests/sanitizers/valgrind.supp tests/sanitizers/lsan.supp tests/sanitizers/asan.supp \
	tests/sanitizers/lsan-notls.supp

check-valgrind: $(check_PROGRAMS)
	@$(MKDIR_P) valgrind-logs; failed=; start=`date +%s`; \
	VALGRIND_SELECT='$(VALGRIND_SELECT)'; $(AM_TESTS_ENVIRONMENT) \
	for p in $${VALGRIND_SELECT:-$(check_PROGRAMS)}; do \
	  case $$p in tests/test_*|fuzz/replay_*) ;; *) continue ;; esac; \
	  log=valgrind-logs/`echo $$p | tr / _`.log; t0=`date +%s`; \
	  if $(VALGRIND) $(VALGRIND_FLAGS) --log-file=$$log.vg ./$$p > $$log 2>&1; then \
	    echo "PASS: valgrind $$p (`expr \`date +%s\` - $$t0` s)"; \
	  else \
	    rc=$$?; echo "FAIL: valgrind $$p (exit $$rc; see $$log.vg and $$log)"; failed="$$failed $$p"; \
	  fi; \
	done; \
	echo "check-valgrind: `expr \`date +%s\` - $$start` s in total"; \
	if test -n "$$failed"; then echo "check-valgrind: failures:$$failed"; exit 1; fi
.PHONY: check-valgrind
CLEANFILES += valgrind-logs/*.log valgrind-logs/*.log.vg
