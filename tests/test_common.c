/* test_common: ns_error formatting, ns_file atomic writes and mkdirs, ns_sha256 against known
 * digests (FIPS 180-2 test vectors) and its sha256sum listing against coreutils. */
#include <math.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/ns_error.h"
#include "common/ns_file.h"
#include "common/ns_outpath.h"
#include "common/ns_range.h"
#include "common/ns_tmp.h"
#include "common/ns_time.h"
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

/* ns_sha256_listing: the files' own checksums in any order give the SHA-256 of what
 * `LC_ALL=C sha256sum B.safetensors a-10.safetensors a-2.safetensors | sha256sum` prints for files
 * holding "", "x" and "abc" (coreutils, run once to get the constant): byte order of the names
 * ("B" < "a-10" < "a-2"), two spaces, one line each. */
static void test_sha256_listing(void)
{
    const char *names[] = {"a-2.safetensors", "B.safetensors", "a-10.safetensors"};
    const char *shas[] = {"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                          "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"};
    char hex[NS_SHA256_HEX_LEN + 1];
    ns_err err;
    CU_ASSERT_EQUAL(ns_sha256_listing(3, names, shas, hex, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(hex, "54ca9a80263223862648de64006fbb2a2d08f26195ff8c51aa9aff61776de309");
    /* one file: the listing of one line, not the file's own checksum */
    CU_ASSERT_EQUAL(ns_sha256_listing(1, names + 1, shas + 1, hex, &err), NS_OK);
    char one[NS_SHA256_HEX_LEN + 1];
    const char *line =
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  B.safetensors\n";
    CU_ASSERT_EQUAL(ns_sha256_buffer(line, strlen(line), one, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(hex, one);
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

/* ns_range: every text a user may type, accepted or refused as the table says (an independent
 * statement of the grammar: decimal only, no space, no NaN/inf/hex/octal/underscore, "-0" is 0,
 * overflow and underflow out of range), and the exact messages. */
static void test_range_integers(void)
{
    static const ns_range r = NS_RANGE_INT(1, 2147483647, "a 32-bit integer");
    static const struct { const char *text; int ok; uint64_t v; } cases[] = {
        {"1", 1, 1}, {"2147483647", 1, 2147483647}, {"007", 1, 7}, {"0", 0, 0}, {"-0", 0, 0},
        {"2147483648", 0, 0}, {"4294967297", 0, 0}, {"18446744073709551615", 0, 0},
        {"18446744073709551616", 0, 0}, {"99999999999999999999999", 0, 0}, {"-1", 0, 0},
        {"0x10", 0, 0}, {"1e3", 0, 0}, {"1.0", 0, 0}, {" 5", 0, 0}, {"5 ", 0, 0}, {"+5", 0, 0},
        {"1_000", 0, 0}, {"", 0, 0}, {"-", 0, 0}, {"nan", 0, 0}, {"inf", 0, 0}, {"--1", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 12345;
        ns_err err;
        ns_err_clear(&err);
        int rc = ns_range_parse_u64(&r, "--n", cases[i].text, &v, &err);
        CU_ASSERT_EQUAL(rc == NS_OK, cases[i].ok);
        if (cases[i].ok) {
            CU_ASSERT_EQUAL(v, cases[i].v);
        } else {
            CU_ASSERT_EQUAL(v, 12345); /* nothing stored */
        }
    }
    static const ns_range z = NS_RANGE_INT(0, 10, NULL);
    uint64_t v = 7;
    ns_err err;
    CU_ASSERT_EQUAL(ns_range_parse_u64(&z, "k", "-0", &v, &err), NS_OK);
    CU_ASSERT_EQUAL(v, 0);
    ns_range_parse_u64(&r, "grid.N", "4294967297", &v, &err);
    CU_ASSERT_STRING_EQUAL(err.msg, "grid.N: 4294967297 is out of range 1..2147483647 (a 32-bit "
                                    "integer)");
    ns_range_parse_u64(&r, "grid.N", "0x10", &v, &err);
    CU_ASSERT_STRING_EQUAL(err.msg, "grid.N: expected an integer in 1..2147483647, got '0x10'");
    ns_range_parse_u64(&z, "--offset", "18446744073709551616", &v, &err);
    CU_ASSERT_STRING_EQUAL(err.msg, "--offset: 18446744073709551616 is out of range 0..10");
    ns_range_parse_u64(&z, "--offset", "-3", &v, &err);
    CU_ASSERT_STRING_EQUAL(err.msg, "--offset: -3 is out of range 0..10");
}

static void test_range_reals(void)
{
    static const ns_range t = NS_RANGE_REAL(1e-6, 1e6, 0, NULL);
    static const ns_range open01 = NS_RANGE_REAL(0.0, 1.0, NS_RANGE_MIN_OPEN | NS_RANGE_MAX_OPEN,
                                                 NULL);
    static const ns_range clip = NS_RANGE_REAL(0.0, 1e6, 0, "0: no clipping");
    static const struct { const ns_range *r; const char *text; int ok; double v; } cases[] = {
        {&t, "1", 1, 1.0}, {&t, "1e-6", 1, 1e-6}, {&t, "1E6", 1, 1e6}, {&t, "0.5", 1, 0.5},
        {&t, ".5", 1, 0.5}, {&t, "5.", 1, 5.0}, {&t, "+2", 1, 2.0}, {&t, "0", 0, 0},
        {&t, "-0", 0, 0}, {&t, "-1", 0, 0}, {&t, "1e400", 0, 0}, {&t, "1e-400", 0, 0},
        {&t, "nan", 0, 0}, {&t, "NaN", 0, 0}, {&t, "inf", 0, 0}, {&t, "-inf", 0, 0},
        {&t, "infinity", 0, 0}, {&t, ".inf", 0, 0}, {&t, "0x10", 0, 0}, {&t, "0x1p3", 0, 0},
        {&t, "1e", 0, 0}, {&t, "e5", 0, 0}, {&t, ".", 0, 0}, {&t, "", 0, 0}, {&t, " 1", 0, 0},
        {&t, "1 ", 0, 0}, {&t, "1,5", 0, 0}, {&t, "1_0", 0, 0}, {&open01, "0", 0, 0},
        {&open01, "1", 0, 0}, {&open01, "0.01", 1, 0.01}, {&clip, "0", 1, 0.0},
        {&clip, "-0", 1, 0.0}, {&clip, "1e-400", 0, 0}, {&clip, "4.9e-324", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double v = 12345.0;
        ns_err err;
        ns_err_clear(&err);
        int rc = ns_range_parse_real(cases[i].r, "x", cases[i].text, &v, &err);
        CU_ASSERT_EQUAL(rc == NS_OK, cases[i].ok);
        if ((rc == NS_OK) != cases[i].ok)
            fprintf(stderr, "case '%s': rc %d (%s)\n", cases[i].text, rc, err.msg);
        if (cases[i].ok) {
            CU_ASSERT_EQUAL(v, cases[i].v);
            CU_ASSERT_FALSE(signbit(v)); /* -0 is stored as 0 */
        } else {
            CU_ASSERT_EQUAL(v, 12345.0);
        }
    }
    double v;
    ns_err err;
    ns_range_parse_real(&t, "--temperature", "0", &v, &err);
    CU_ASSERT_STRING_EQUAL(err.msg, "--temperature: 0 is out of range [1e-6, 1e6]");
    ns_range_parse_real(&t, "--temperature", "-0", &v, &err);
    CU_ASSERT_STRING_EQUAL(err.msg, "--temperature: -0 is out of range [1e-6, 1e6]");
    ns_range_parse_real(&open01, "ks_alpha", "nan", &v, &err);
    CU_ASSERT_STRING_EQUAL(err.msg, "ks_alpha: expected a number in (0, 1), got 'nan'");
    char b[128];
    CU_ASSERT_STRING_EQUAL(ns_range_check_real(&clip, -1.0, b, sizeof b),
                           "-1 is out of range [0, 1e6] (0: no clipping)");
    CU_ASSERT_STRING_EQUAL(ns_range_check_real(&clip, NAN, b, sizeof b),
                           "NaN is out of range [0, 1e6] (0: no clipping)");
    static const ns_range odd = NS_RANGE_REAL(1e-100, 0.001, 0, NULL);
    ns_range_format(&odd, b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "[1e-100, 0.001]");
}

/* ns_outpath: every way an output can name an input (same text, "..", a symbolic link, a hard
 * link, a path not yet created inside an input directory) is refused with both paths named; a
 * neighbour is not. */
static void test_outpath(void)
{
    char d[300], cmd[700];
    snprintf(d, sizeof d, "%s/op", tmpdir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/ck %s/sub %s/other && echo text > %s/c.txt && "
             "ln -s c.txt %s/link && ln %s/c.txt %s/hard && ln -s ck %s/cklink", d, d, d, d, d, d,
             d, d);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    CU_ASSERT_EQUAL_FATAL(chdir(d), 0);
    const ns_outpath_role ins[] = {{"the corpus", "c.txt", 0}, {"the checkpoint directory", "ck", 1}};
    static const struct { const char *out; int tree; const char *msg; } cases[] = {
        {"c.txt", 0, "output c.txt is the corpus c.txt; choose another output path"},
        {"./sub/../c.txt", 0, "output ./sub/../c.txt is the corpus c.txt; choose another output path"},
        {"link", 0, "output link is the corpus c.txt; choose another output path"},
        {"hard", 0, "output hard is the corpus c.txt (the same file); choose another output path"},
        {"ck/journal.nsj", 0, "output ck/journal.nsj lies inside the checkpoint directory ck; choose "
                              "another output path"},
        {"cklink/new/deeper/x.nc", 0, "output cklink/new/deeper/x.nc lies inside the checkpoint "
                                      "directory ck; choose another output path"},
        {"nothere/../ck/x", 0, "output nothere/../ck/x lies inside the checkpoint directory ck; "
                               "choose another output path"},
        {".", 1, "the corpus c.txt lies inside output . ; choose another output directory"},
        {"ck2/x.nc", 0, NULL}, {"sub/c.txt", 0, NULL}, {"other", 1, NULL}, {"c.txt.nc", 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ns_outpath_role out = {"output", cases[i].out, cases[i].tree};
        ns_err err;
        ns_err_clear(&err);
        int rc = ns_outpath_check(&out, ins, 2, &err);
        if (!cases[i].msg) {
            CU_ASSERT_EQUAL(rc, NS_OK);
        } else if (cases[i].tree) {
            CU_ASSERT_EQUAL(rc, NS_ERR_INVALID);
            CU_ASSERT_STRING_EQUAL(err.msg, "the corpus c.txt lies inside output .; choose another "
                                            "output directory");
        } else {
            CU_ASSERT_EQUAL(rc, NS_ERR_INVALID);
            CU_ASSERT_STRING_EQUAL(err.msg, cases[i].msg);
        }
        if ((rc == NS_OK) != !cases[i].msg)
            fprintf(stderr, "outpath case %s: %s\n", cases[i].out, err.msg);
    }
    char *r = ns_outpath_resolve("nothere/a/../../sub/./x");
    char want[400];
    snprintf(want, sizeof want, "%s/sub/x", d);
    char real[400];
    CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(d, real));
    snprintf(want, sizeof want, "%s/sub/x", real);
    CU_ASSERT_STRING_EQUAL(r, want);
    free(r);
    CU_ASSERT_EQUAL(chdir("/"), 0);
}

/* ns_tmp: only FINAL.tmp.<pid> of a dead process goes; a live process's, other names and
 * directories stay; scratch directories likewise. */
static void count_removed(void *user, const char *path)
{
    (void)path;
    ++*(int *)user;
}

static void test_tmp_stale(void)
{
    char d[300], cmd[900];
    snprintf(d, sizeof d, "%s/tmpd", tmpdir);
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    CU_ASSERT_FATAL(dead > 0);
    waitpid(dead, NULL, 0);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/x.nc.tmp.99 && cd %s && touch x.nc.tmp.%ld x.nc.tmp.%ld "
             "x.nc.tmp.%ldz xx.nc.tmp.%ld x.nc.tmp. y.nc.tmp.%ld && mkdir s && "
             "mkdir s/pre.%ld.abc s/pre.%ld.abc s/pre.%ld && touch s/pre.%ld.abc/f", d, d,
             (long)dead, (long)getpid(), (long)dead, (long)dead, (long)dead, (long)dead,
             (long)getpid(), (long)dead, (long)dead);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    char final[400], p[500];
    snprintf(final, sizeof final, "%s/x.nc", d);
    int n = 0;
    CU_ASSERT_EQUAL(ns_tmp_remove_stale(final, count_removed, &n), 1);
    CU_ASSERT_EQUAL(n, 1);
    snprintf(p, sizeof p, "%s/x.nc.tmp.%ld", d, (long)dead);
    CU_ASSERT_FALSE(ns_file_exists(p));
    const char *kept[] = {"x.nc.tmp.99", "x.nc.tmp.", "xx.nc.tmp.", "y.nc.tmp."};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        snprintf(cmd, sizeof cmd, "ls %s/%s* > /dev/null 2>&1", d, kept[i]);
        CU_ASSERT_EQUAL(system(cmd), 0);
    }
    snprintf(p, sizeof p, "%s/x.nc.tmp.%ld", d, (long)getpid());
    CU_ASSERT_TRUE(ns_file_exists(p)); /* ours, alive */
    CU_ASSERT_EQUAL(ns_tmp_remove_own(final, getpid()), 1);
    CU_ASSERT_FALSE(ns_file_exists(p));
    snprintf(p, sizeof p, "%s/s", d);
    CU_ASSERT_EQUAL(ns_tmp_remove_dirs(p, "pre", 0, NULL, NULL), 1); /* the dead one, with its file */
    snprintf(cmd, sizeof cmd, "cd %s/s && test -d pre.%ld.abc && test -d pre.%ld && "
             "! test -e pre.%ld.abc", d, (long)getpid(), (long)dead, (long)dead);
    CU_ASSERT_EQUAL(system(cmd), 0);
    char *dir = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_tmp_make_dir(p, "pre", &dir, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_tmp_remove_dirs(p, "pre", getpid(), NULL, NULL), 2); /* both of ours */
    CU_ASSERT_FALSE(ns_file_exists(dir));
    free(dir);
}

/* ns_iso_now: UTC to the second, within the seconds around the call as time() and gmtime_r give
 * them independently; a buffer too small for the text gets the truncated "unknown", never a
 * partial date. */
static void test_iso_now(void)
{
    char buf[64], lo[32], hi[32];
    struct tm tm;
    time_t t0 = time(NULL);
    ns_iso_now(buf, sizeof buf);
    time_t t1 = time(NULL);
    CU_ASSERT_EQUAL(strlen(buf), NS_ISO_TIME_LEN - 1);
    gmtime_r(&t0, &tm);
    snprintf(lo, sizeof lo, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    gmtime_r(&t1, &tm);
    snprintf(hi, sizeof hi, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    /* same-length zero-padded fields: string order is time order */
    CU_ASSERT(strcmp(lo, buf) <= 0 && strcmp(buf, hi) <= 0);
    char exact[NS_ISO_TIME_LEN];
    ns_iso_now(exact, sizeof exact);
    CU_ASSERT_EQUAL(strlen(exact), NS_ISO_TIME_LEN - 1);
    char small[NS_ISO_TIME_LEN - 1];
    ns_iso_now(small, sizeof small);
    CU_ASSERT_STRING_EQUAL(small, "unknown");
    char tiny[4] = "xyz";
    ns_iso_now(tiny, sizeof tiny);
    CU_ASSERT_STRING_EQUAL(tiny, "unk");
    ns_iso_now(tiny, 0);
    CU_ASSERT_STRING_EQUAL(tiny, "unk");
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
    CU_add_test(s, "sha256 of a sha256sum listing", test_sha256_listing);
    CU_add_test(s, "atomic write, read back, hash", test_atomic_write_then_read_and_hash);
    CU_add_test(s, "errors name the path", test_errors_name_the_path);
    CU_add_test(s, "range: integers", test_range_integers);
    CU_add_test(s, "range: reals", test_range_reals);
    CU_add_test(s, "outpath: outputs that are inputs", test_outpath);
    CU_add_test(s, "tmp: stale temporaries of dead processes", test_tmp_stale);
    CU_add_test(s, "iso_now: UTC to the second; too small a buffer gets unknown", test_iso_now);
    int failures = ns_test_run_all();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return failures;
}
