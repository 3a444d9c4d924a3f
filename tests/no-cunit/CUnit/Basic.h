/* no-cunit/CUnit/Basic.h: what the C unit tests are compiled against when configure found no
 * CUnit (CUnit is needed only for `make check`, not to build normsweep). Every test program
 * starts with CU_initialize_registry(), which here prints why and exits 77, automake's SKIP: no
 * test is ever run, let alone reported as passed. The assertion macros keep CUnit's shape (a
 * block evaluating the arguments) only so that the programs compile unchanged; they are never
 * reached. Install CUnit (Debian: libcunit1-dev) and re-run configure to run the tests. */
#ifndef NS_NO_CUNIT_BASIC_H
#define NS_NO_CUNIT_BASIC_H

/* Like the real CUnit headers (in a system directory): no warnings from the macro expansions. */
#pragma GCC system_header

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { CUE_SUCCESS = 0, CUE_NOREGISTRY = 10 } CU_ErrorCode;
typedef enum { CU_BRM_NORMAL = 0, CU_BRM_SILENT, CU_BRM_VERBOSE } CU_BasicRunMode;
typedef struct CU_Suite CU_Suite, *CU_pSuite;
typedef struct CU_Test CU_Test, *CU_pTest;
typedef void (*CU_TestFunc)(void);
typedef int (*CU_InitializeFunc)(void);
typedef int (*CU_CleanupFunc)(void);

static inline void ns_no_cunit_skip(void)
{
    fprintf(stderr, "SKIP: CUnit was not found when normsweep was configured, so this C unit test "
                    "cannot run (Debian: apt-get install libcunit1-dev, then re-run configure)\n");
    exit(77);
}

static inline CU_ErrorCode CU_initialize_registry(void)
{
    ns_no_cunit_skip();
    return CUE_NOREGISTRY;
}
static inline CU_pSuite CU_add_suite(const char *name, CU_InitializeFunc init, CU_CleanupFunc clean)
{
    (void)name, (void)init, (void)clean;
    ns_no_cunit_skip();
    return NULL;
}
static inline CU_pTest CU_add_test(CU_pSuite suite, const char *name, CU_TestFunc fn)
{
    (void)suite, (void)name, (void)fn;
    ns_no_cunit_skip();
    return NULL;
}
static inline void CU_basic_set_mode(CU_BasicRunMode mode) { (void)mode; ns_no_cunit_skip(); }
static inline CU_ErrorCode CU_basic_run_tests(void) { ns_no_cunit_skip(); return CUE_NOREGISTRY; }
static inline unsigned CU_get_number_of_failures(void) { ns_no_cunit_skip(); return 1; }
static inline unsigned CU_get_number_of_suites_failed(void) { ns_no_cunit_skip(); return 1; }
static inline void CU_cleanup_registry(void) {}

#define NS_NO_CUNIT_CHECK(e) { (void)(e); }
#define CU_ASSERT(v) NS_NO_CUNIT_CHECK(!(v))
#define CU_ASSERT_FATAL(v) NS_NO_CUNIT_CHECK(!(v))
#define CU_ASSERT_TRUE(v) NS_NO_CUNIT_CHECK(!(v))
#define CU_ASSERT_FALSE(v) NS_NO_CUNIT_CHECK(!(v))
#define CU_FAIL(msg) NS_NO_CUNIT_CHECK(msg)
#define CU_ASSERT_EQUAL(a, e) NS_NO_CUNIT_CHECK((a) == (e))
#define CU_ASSERT_EQUAL_FATAL(a, e) NS_NO_CUNIT_CHECK((a) == (e))
#define CU_ASSERT_NOT_EQUAL(a, e) NS_NO_CUNIT_CHECK((a) != (e))
#define CU_ASSERT_PTR_EQUAL(a, e) NS_NO_CUNIT_CHECK((const void *)(a) == (const void *)(e))
#define CU_ASSERT_PTR_NULL(p) NS_NO_CUNIT_CHECK(NULL == (const void *)(p))
#define CU_ASSERT_PTR_NOT_NULL(p) NS_NO_CUNIT_CHECK(NULL != (const void *)(p))
#define CU_ASSERT_PTR_NOT_NULL_FATAL(p) NS_NO_CUNIT_CHECK(NULL != (const void *)(p))
#define CU_ASSERT_STRING_EQUAL(a, e) NS_NO_CUNIT_CHECK(strcmp((const char *)(a), (const char *)(e)))
#define CU_ASSERT_DOUBLE_EQUAL(a, e, g) \
    NS_NO_CUNIT_CHECK((double)(a) - (double)(e) + (double)(g))

#endif
