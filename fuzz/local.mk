# fuzz: libFuzzer targets, one per parser of outside input (fuzz/fuzz_<parser>.c), their seed
# corpora (fuzz/corpus/<parser>/, written by fuzz/gen_seeds.py), dictionaries and crash
# reproducers (fuzz/regressions/<parser>/). `make fuzz-targets` links the libFuzzer binaries; it
# is meant for a build configured by scripts/fuzz (clang, CFLAGS with -fsanitize=fuzzer-no-link,
# address,undefined), which then runs them. The same targets are replayed in `make check` through
# a plain main() (tests/hardening.mk).
# Each target links only the libraries it needs (so one module's half-written state does not
# block fuzzing the others). The replays of `make check` (tests/hardening.mk) link the same lists,
# so a list that misses a library fails `make check`, not only scripts/fuzz.
FUZZ_LIBS_TOKENIZER = src/tokenizer/libns_tokenizer.a src/common/libns_common.a
# model parses the attention normalizer of config.json (norm/ns_normalize)
FUZZ_LIBS_MODEL = src/model/libns_model.a src/norm/libns_norm.a src/common/libns_common.a
FUZZ_LIBS_IO = src/io/libns_io.a src/common/libns_common.a
FUZZ_LIBS_ARCHIVE = src/archive/libns_archive.a src/common/libns_common.a
FUZZ_LIBS_SWEEP = $(NS_LIBS)
# the training grid file (traingrid/ns_train_grid; normalizer names from norm/, the strict
# ranges of model/ns_gpt2_config, the UTF-8 length of corpus/, whose object also encodes through
# tokenizer/)
FUZZ_LIBS_TRAIN_GRID = src/traingrid/libns_traingrid.a src/train/libns_train.a src/model/libns_model.a \
	src/analysis/libns_analysis.a src/norm/libns_norm.a src/corpus/libns_corpus.a src/tokenizer/libns_tokenizer.a \
	src/common/libns_common.a
FUZZ_HDRS = $(top_srcdir)/fuzz/ns_fuzz.h
FUZZ_COMPILE = $(CC) $(AM_CPPFLAGS) $(NS_EXT_CFLAGS) $(CPPFLAGS) $(AM_CFLAGS) $(CFLAGS) \
	-fsanitize=fuzzer $(AM_LDFLAGS) $(LDFLAGS)
FUZZ_TARGETS = fuzz/fuzz_tokenizer fuzz/fuzz_tokenizer_json fuzz/fuzz_safetensors fuzz/fuzz_config fuzz/fuzz_sweep_yaml \
	fuzz/fuzz_nc_read fuzz/fuzz_archive fuzz/fuzz_manifest fuzz/fuzz_train_grid

fuzz-targets: $(FUZZ_TARGETS)
.PHONY: fuzz-targets

fuzz/fuzz_tokenizer: $(top_srcdir)/fuzz/fuzz_tokenizer.c $(FUZZ_HDRS) $(FUZZ_LIBS_TOKENIZER)
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_COMPILE) -o $@ $(top_srcdir)/fuzz/fuzz_tokenizer.c $(FUZZ_LIBS_TOKENIZER) $(NS_EXT_LIBS) $(LIBS)
fuzz/fuzz_tokenizer_json: $(top_srcdir)/fuzz/fuzz_tokenizer_json.c $(FUZZ_HDRS) $(FUZZ_LIBS_TOKENIZER)
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_COMPILE) -o $@ $(top_srcdir)/fuzz/fuzz_tokenizer_json.c $(FUZZ_LIBS_TOKENIZER) $(NS_EXT_LIBS) $(LIBS)
fuzz/fuzz_safetensors: $(top_srcdir)/fuzz/fuzz_safetensors.c $(FUZZ_HDRS) $(FUZZ_LIBS_MODEL)
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_COMPILE) -o $@ $(top_srcdir)/fuzz/fuzz_safetensors.c $(FUZZ_LIBS_MODEL) $(NS_EXT_LIBS) $(LIBS)
fuzz/fuzz_config: $(top_srcdir)/fuzz/fuzz_config.c $(FUZZ_HDRS) $(FUZZ_LIBS_MODEL)
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_COMPILE) -o $@ $(top_srcdir)/fuzz/fuzz_config.c $(FUZZ_LIBS_MODEL) $(NS_EXT_LIBS) $(LIBS)
fuzz/fuzz_sweep_yaml: $(top_srcdir)/fuzz/fuzz_sweep_yaml.c $(FUZZ_HDRS) $(FUZZ_LIBS_SWEEP)
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_COMPILE) -o $@ $(top_srcdir)/fuzz/fuzz_sweep_yaml.c $(FUZZ_LIBS_SWEEP) $(NS_EXT_LIBS) $(LIBS)
fuzz/fuzz_nc_read: $(top_srcdir)/fuzz/fuzz_nc_read.c $(FUZZ_HDRS) $(FUZZ_LIBS_IO)
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_COMPILE) -o $@ $(top_srcdir)/fuzz/fuzz_nc_read.c $(FUZZ_LIBS_IO) $(NS_EXT_LIBS) $(LIBS)
fuzz/fuzz_archive: $(top_srcdir)/fuzz/fuzz_archive.c $(FUZZ_HDRS) $(FUZZ_LIBS_ARCHIVE)
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_COMPILE) -o $@ $(top_srcdir)/fuzz/fuzz_archive.c $(FUZZ_LIBS_ARCHIVE) $(NS_EXT_LIBS) $(LIBS)
fuzz/fuzz_manifest: $(top_srcdir)/fuzz/fuzz_manifest.c $(FUZZ_HDRS) $(FUZZ_LIBS_ARCHIVE)
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_COMPILE) -o $@ $(top_srcdir)/fuzz/fuzz_manifest.c $(FUZZ_LIBS_ARCHIVE) $(NS_EXT_LIBS) $(LIBS)
fuzz/fuzz_train_grid: $(top_srcdir)/fuzz/fuzz_train_grid.c $(FUZZ_HDRS) $(FUZZ_LIBS_TRAIN_GRID)
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_COMPILE) -o $@ $(top_srcdir)/fuzz/fuzz_train_grid.c $(FUZZ_LIBS_TRAIN_GRID) $(NS_EXT_LIBS) $(LIBS)

CLEANFILES += $(FUZZ_TARGETS)
EXTRA_DIST += fuzz/fuzz_tokenizer.c fuzz/fuzz_tokenizer_json.c fuzz/fuzz_safetensors.c fuzz/fuzz_config.c \
	fuzz/fuzz_sweep_yaml.c fuzz/fuzz_nc_read.c fuzz/fuzz_archive.c fuzz/fuzz_manifest.c \
	fuzz/fuzz_train_grid.c \
	fuzz/gen_seeds.py fuzz/corpus fuzz/dict fuzz/regressions
