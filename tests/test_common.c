/* test_common: ns_error formatting, ns_file atomic writes and mkdirs, ns_sha256 against
 * known digests (FIPS 180-2 test vectors). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ns_error.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "ns_test.h"

static char tmpdir[256];

static void test_fail_formats_and_returns_code(void)
{
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_fail(&err, NS_ERR_IO, "open %s: %s", "x.bin", "No such file");
    CU_ASSERT_EQUAL(rc, NS_ERR_IO);
    CU_ASSERT_EQUAL(err.code, NS_ERR_IO);
    CU_ASSERT_STRING_EQUAL(err.msg, "open x.bin: No such file");
    ns_err_prefix(&err, "model %s", "gpt2");
    CU_ASSERT_STRING_EQUAL(err.msg, "model gpt2: open x.bin: No such file");
    CU_ASSERT_EQUAL(ns_fail(NULL, NS_ERR_FORMAT, "dropped"), NS_ERR_FORMAT);
    /* quoted input cannot break the one-line rule */
    ns_fail(&err, NS_ERR_FORMAT, "bad name '%s'", "a\nb\rc\td\x1b");
    CU_ASSERT_STRING_EQUAL(err.msg, "bad name 'a?b?c d?'");
    ns_err_prefix(&err, "file %s", "x\ny");
    CU_ASSERT_STRING_EQUAL(err.msg, "file x?y: bad name 'a?b?c d?'");
}

static void test_sha256_known_vectors(void)
{
    char hex[NS_SHA256_HEX_LEN + 1];
    ns_err err;
    CU_ASSERT_EQUAL(ns_sha256_buffer("abc", 3, hex, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CU_ASSERT_EQUAL(ns_sha256_buffer("", 0, hex, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_atomic_write_then_read_and_hash(void)
{
    ns_err err;
    char *path = ns_path_join(tmpdir, "sub/dir/file.txt");
    char *dir = ns_path_join(tmpdir, "sub/dir");
    CU_ASSERT_EQUAL_FATAL(ns_file_mkdirs(dir, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_file_mkdirs(dir, &err), NS_OK); /* existing is fine */
    CU_ASSERT_EQUAL_FATAL(ns_file_write_atomic(path, "abc", 3, &err), NS_OK);
    char *data = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(path, 0, &data, &len, &err), NS_OK);
    CU_ASSERT_EQUAL(len, 3);
    CU_ASSERT_STRING_EQUAL(data, "abc");
    char hex[NS_SHA256_HEX_LEN + 1];
    CU_ASSERT_EQUAL(ns_sha256_file(path, hex, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    free(data);
    CU_ASSERT_EQUAL(ns_file_read_all(path, 2, &data, &len, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NULL(data); /* nothing allocated on failure */
    /* no temporary left behind */
    char *tmp = ns_file_temp_name(path);
    CU_ASSERT_FALSE(ns_file_exists(tmp));
    free(tmp);
    unlink(path);
    free(path);
    free(dir);
}

static void test_errors_name_the_path(void)
{
    ns_err err;
    char *data = NULL;
    size_t len;
    CU_ASSERT_EQUAL(ns_file_read_all("/nonexistent/zz.txt", 0, &data, &len, &err), NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/zz.txt"));
    CU_ASSERT_EQUAL(ns_file_write_atomic("/nonexistent/dir/f", "x", 1, &err), NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/dir/f"));
    ns_mmap map;
    CU_ASSERT_EQUAL(ns_mmap_open("/nonexistent/m", &map, &err), NS_ERR_IO);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_common.%ld", (long)getpid());
    mkdir(tmpdir, 0755);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("common", NULL, NULL);
    CU_add_test(s, "ns_fail formats and returns the code", test_fail_formats_and_returns_code);
    CU_add_test(s, "sha256 known vectors", test_sha256_known_vectors);
    CU_add_test(s, "atomic write, read back, hash", test_atomic_write_then_read_and_hash);
    CU_add_test(s, "errors name the path", test_errors_name_the_path);
    int failures = ns_test_run_all();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return failures;
}
