# common: status codes, file helpers, locks, SHA-256, machine queries, the data directory, the
# CBLAS's identity and threads (ns_blas), the git commit of the build (ns_build), the ISO 8601
# time of day (ns_time), how an asset is called (ns_asset_ref), the hooks a long stage is given
# by its command (ns_hooks.h).
noinst_LIBRARIES += src/common/libns_common.a
src_common_libns_common_a_SOURCES = \
	src/common/ns_error.c src/common/ns_error.h \
	src/common/ns_file.c src/common/ns_file.h \
	src/common/ns_lock.c src/common/ns_lock.h \
	src/common/ns_sha256.c src/common/ns_sha256.h \
	src/common/ns_sys.c src/common/ns_sys.h \
	src/common/ns_datadir.c src/common/ns_datadir.h \
	src/common/ns_blas.c src/common/ns_blas.h \
	src/common/ns_build.c src/common/ns_build.h \
	src/common/ns_range.c src/common/ns_range.h \
	src/common/ns_outpath.c src/common/ns_outpath.h \
	src/common/ns_tmp.c src/common/ns_tmp.h \
	src/common/ns_progress.c src/common/ns_progress.h src/common/ns_hooks.c src/common/ns_hooks.h \
	src/common/ns_time.c src/common/ns_time.h \
	src/common/ns_asset_ref.c src/common/ns_asset_ref.h
# ns_datadir: the installed data directory and the source and build trees, compiled in.
src_common_libns_common_a_CPPFLAGS = $(AM_CPPFLAGS) $(CRYPTO_CFLAGS) $(BLAS_CFLAGS) \
	-DNS_ABS_TOP_SRCDIR='"$(abs_top_srcdir)"' -DNS_ABS_TOP_BUILDDIR='"$(abs_top_builddir)"' \
	-DNS_PKGDATADIR='"$(pkgdatadir)"'

# ns_build's commit, generated at every make by scripts/git-commit and rewritten only when it
# changed: a rebuild after a commit or an edit names the new source (and relinks), an unchanged
# tree rebuilds nothing. A release tarball carries the commit it was made from (dist-hook).
BUILT_SOURCES += src/common/ns_git_commit.h
CLEANFILES += src/common/ns_git_commit.h
src/common/libns_common_a-ns_build.$(OBJEXT): src/common/ns_git_commit.h
src/common/ns_git_commit.h: ns-git-commit-always
	@$(MKDIR_P) src/common
	@c=`$(SHELL) $(top_srcdir)/scripts/git-commit $(top_srcdir)`; \
	short=`echo "$$c" | sed 's/^\([0-9a-f]\{12\}\)[0-9a-f]*/\1/'`; \
	printf '#define NS_GIT_COMMIT "%s"\n#define NS_GIT_SHORT "%s"\n' "$$c" "$$short" > $@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; echo "  GIT      $$c"; fi
.PHONY: ns-git-commit-always
ns-git-commit-always:
dist-hook: ns-dist-git-commit
ns-dist-git-commit:
	$(SHELL) $(top_srcdir)/scripts/git-commit $(top_srcdir) > $(distdir)/.git-commit
.PHONY: ns-dist-git-commit

# ns_asset_ref: the resolved asset, a plain type (header only); ns_attr: one attribute value.
noinst_HEADERS += src/common/ns_asset_ref.h src/common/ns_attr.h
# header-only: the SIMD helpers of norm and analysis (built with their vectorising flags)
noinst_HEADERS += src/common/ns_simd.h
