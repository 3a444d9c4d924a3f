/* ns_build: the git commit this binary was compiled from (src/common/ns_git_commit.h, generated in
 * the build tree by Makefile.am at every make and rewritten only when the commit changes). */
#include "common/ns_build.h"

#include <string.h>

#include "src/common/ns_git_commit.h"

const char *ns_build_git_commit(void)
{
    return NS_GIT_COMMIT;
}

const char *ns_build_git_short(void)
{
    return NS_GIT_SHORT;
}

int ns_build_git_exact(void)
{
    return strcmp(NS_GIT_COMMIT, "unknown") != 0 && strstr(NS_GIT_COMMIT, "-dirty") == NULL;
}
