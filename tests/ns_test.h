/* ns_test: helpers shared by the CUnit test programs (suite running, test asset paths). */
#ifndef NS_TEST_H
#define NS_TEST_H

#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Path from an environment variable set by tests/test_env.sh; fails the test run loudly when
 * unset, so a missing asset is a failure, never a silent skip. */
static inline const char *ns_test_env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        fprintf(stderr, "test environment variable %s is not set (run through `make check`)\n", name);
        exit(1);
    }
    return v;
}

/* Remove dir and everything under it (a test's temporary directory). */
static inline void ns_test_rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(n);
        if (!p)
            continue;
        snprintf(p, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            ns_test_rm_tree(p);
        else
            unlink(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Run every registered suite verbosely; returns the number of failures (main's exit status). */
static inline int ns_test_run_all(void)
{
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failures > 255 ? 255 : (int)failures;
}

#endif
