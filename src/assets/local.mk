# assets: the manifest of tokenizer/corpus/model/golden files with SHA-256 sums, and fetching them
# into the assets directory from a mirror directory or by download (libcurl).
noinst_LIBRARIES += src/assets/libns_assets.a
src_assets_libns_assets_a_SOURCES = \
	src/assets/ns_assets.c src/assets/ns_assets.h src/assets/ns_asset_ctx.h \
	src/assets/ns_assets_place.c src/assets/ns_assets_place.h \
	src/assets/ns_asset_stamp.c src/assets/ns_asset_stamp.h \
	src/assets/ns_assets_util.c src/assets/ns_assets_util.h \
	src/assets/ns_manifest.c src/assets/ns_manifest.h \
	src/assets/ns_asset_member.c src/assets/ns_asset_member.h \
	src/assets/ns_asset_shards.c src/assets/ns_asset_shards.h \
	src/assets/ns_download.c src/assets/ns_download.h
# The source tree (default mirror ../shared/data).
src_assets_libns_assets_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS) \
	-DNS_ABS_TOP_SRCDIR='"$(abs_top_srcdir)"'

# The manifest is installed as $(pkgdatadir)/assets/manifest.json (src/common/ns_datadir), so an
# installed normsweep finds its assets without the source tree.
nobase_dist_pkgdata_DATA += assets/manifest.json

# Tests
check_PROGRAMS += tests/test_assets
tests_test_assets_SOURCES = tests/test_assets.c
tests_test_assets_CPPFLAGS = $(NS_TEST_CPP)
tests_test_assets_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_assets tests/assets_cli.sh
EXTRA_DIST += tests/assets_cli.sh docs/ASSETS.md

# Before the tests run, fetch the assets into $(NORMSWEEP_ASSETS) (test_env.sh: default
# $(abs_top_builddir)/assets) from the mirror test_env.sh picks (../shared/data when present).
# It runs on every `make check`: already-present files are checked against their stamp, not
# rehashed, so this costs well under a second once the assets are there.
check_DATA = assets.stamp
assets.stamp: normsweep$(EXEEXT) $(top_srcdir)/assets/manifest.json FORCE
	$(AM_V_GEN)top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; \
	. '$(abs_top_srcdir)/tests/test_env.sh'; \
	./normsweep$(EXEEXT) assets fetch --dir "$$NORMSWEEP_ASSETS" && touch $@
CLEANFILES += assets.stamp
FORCE:
.PHONY: FORCE

# Remove only the asset directories fetch creates (in an in-tree build assets/ also holds the
# manifest): symlinks into the mirror and copies.
clean-local: clean-local-assets
clean-local-assets:
	-for d in tokenizer qwen3-tokenizer llama3-tokenizer claude-tokenizer tokref corpus gpt2-standin gpt2 golden; do \
	  rm -rf "$(abs_top_builddir)/assets/$$d"; done
	-test '$(abs_top_builddir)' = '$(abs_top_srcdir)' || rmdir "$(abs_top_builddir)/assets" 2>/dev/null
.PHONY: clean-local-assets
