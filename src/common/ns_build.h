/* ns_build: what this binary was built from -- the git commit of the source tree when it was
 * compiled (scripts/git-commit, rerun at every `make`), so --version, the outputs' provenance and
 * archives name the code that actually computed them, not the commit the build was configured
 * from. The compiler and flags are configure's (NS_BUILD_CC, NS_BUILD_CFLAGS in config.h). */
#ifndef NS_BUILD_H
#define NS_BUILD_H

/* "<40 hex>", "<40 hex>-dirty" (tracked files differed from that commit), or "unknown". */
const char *ns_build_git_commit(void);
/* The same with the hash cut to 12 digits ("-dirty" kept), for one-line records. */
const char *ns_build_git_short(void);
/* 1 when the commit identifies the source exactly (neither "unknown" nor "-dirty"). */
int ns_build_git_exact(void);

#endif
