/* ns_test: helpers shared by the CUnit test programs (suite running, test asset paths). */
#ifndef NS_TEST_H
#define NS_TEST_H

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

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
