/* test_archive: ns_archive (tar.gz write/extract, MANIFEST.sha256 check, tamper detection,
 * permissions, links), ns_nc_read (global attributes and dimensions), ns_nc_check (a file against
 * its description), the run history's lines and ns_verify_compare. */
#include <archive.h>
#include <archive_entry.h>
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "archive/ns_archive.h"
#include "archive/ns_archive_check.h"
#include "archive/ns_archive_provenance.h"
#include "io/ns_nc_check.h"
#include "io/ns_nc_read.h"
#include "io/ns_nc_write.h"
#include "ns_test.h"
#include "archive/ns_verify.h"

static char tmp[256];

static char *in_tmp(const char *name)
{
    char *p = ns_path_join(tmp, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* A fresh, empty directory below tmp. */
static char *fresh_dir(const char *name)
{
    char *d = in_tmp(name);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    CU_ASSERT_EQUAL(system(cmd), 0);
    CU_ASSERT_EQUAL_FATAL(mkdir(d, 0755), 0);
    return d;
}

/* A raw tar.gz written without ns_archive (to build tampered archives): entries path=text,
 * type 'f' regular, 'l' symlink (text = target). */
typedef struct raw_entry {
    const char *path;
    const char *text;
    char type;
} raw_entry;

static void write_raw(const char *out, const raw_entry *e, size_t n)
{
    struct archive *a = archive_write_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    archive_write_add_filter_gzip(a);
    archive_write_set_format_pax_restricted(a);
    CU_ASSERT_EQUAL_FATAL(archive_write_open_filename(a, out), ARCHIVE_OK);
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *ae = archive_entry_new();
        archive_entry_set_pathname(ae, e[i].path);
        archive_entry_set_perm(ae, 0644);
        if (e[i].type == 'l') {
            archive_entry_set_filetype(ae, AE_IFLNK);
            archive_entry_set_symlink(ae, e[i].text);
            archive_entry_set_size(ae, 0);
            CU_ASSERT_EQUAL(archive_write_header(a, ae), ARCHIVE_OK);
        } else {
            size_t len = strlen(e[i].text);
            archive_entry_set_filetype(ae, AE_IFREG);
            archive_entry_set_size(ae, (la_int64_t)len);
            CU_ASSERT_EQUAL(archive_write_header(a, ae), ARCHIVE_OK);
            CU_ASSERT_EQUAL(archive_write_data(a, e[i].text, len), (la_ssize_t)len);
        }
        archive_entry_free(ae);
    }
    CU_ASSERT_EQUAL(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
}

static char *sha_of(const char *text)
{
    static char hex[4][NS_SHA256_HEX_LEN + 1];
    static int k;
    k = (k + 1) % 4;
    ns_err err;
    CU_ASSERT_EQUAL(ns_sha256_buffer(text, strlen(text), hex[k], &err), NS_OK);
    return hex[k];
}

/* Extract archive into a fresh dir and check its manifest; returns the issues (caller frees). */
static int extract_and_check(const char *archive, const char *dirname, ns_archive_check *chk,
                             ns_err *err)
{
    char *dir = fresh_dir(dirname);
    ns_archive_list l;
    int rc = ns_archive_extract(archive, dir, &l, err);
    if (rc == NS_OK) {
        char *m = ns_path_join(dir, NS_ARCHIVE_MANIFEST), *text = NULL;
        size_t len = 0;
        if (ns_file_exists(m))
            CU_ASSERT_EQUAL(ns_file_read_all(m, 0, &text, &len, err), NS_OK);
        rc = ns_archive_check_manifest(&l, text, len, chk, err);
        free(text);
        free(m);
        ns_archive_list_free(&l);
    }
    free(dir);
    return rc;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_name_ok(void)
{
    CU_ASSERT_TRUE(ns_archive_name_ok("run.nc"));
    CU_ASSERT_TRUE(ns_archive_name_ok("checkpoint/journal.nsj"));
    CU_ASSERT_TRUE(ns_archive_name_ok("a..b/c"));
    CU_ASSERT_FALSE(ns_archive_name_ok(""));
    CU_ASSERT_FALSE(ns_archive_name_ok("/etc/passwd"));
    CU_ASSERT_FALSE(ns_archive_name_ok("../x"));
    CU_ASSERT_FALSE(ns_archive_name_ok("a/../../x"));
    CU_ASSERT_FALSE(ns_archive_name_ok("a//b"));
    CU_ASSERT_FALSE(ns_archive_name_ok("./a"));
    CU_ASSERT_FALSE(ns_archive_name_ok("a/"));
    CU_ASSERT_FALSE(ns_archive_name_ok("a\nb"));
    CU_ASSERT_FALSE(ns_archive_name_ok("a\\b"));
}

static void test_round_trip(void)
{
    ns_err err;
    char *f1 = in_tmp("src1.bin"), *out = in_tmp("rt.tar.gz");
    /* a file larger than one 1 MiB I/O block, with every byte value */
    FILE *f = fopen(f1, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (size_t i = 0; i < 1500000; i++)
        fputc((int)((i * 7919u) & 255u), f);
    fclose(f);
    const char *yaml = "model: gpt2\n";
    ns_archive_source src[] = {
        {"data/src1.bin", f1, NULL, 0, 0},
        {"sweep.yaml", NULL, yaml, strlen(yaml), 0},
        {"empty", NULL, "", 0, 0},
    };
    ns_archive_list written;
    CU_ASSERT_EQUAL_FATAL(ns_archive_write(out, "rt", src, 3, &written, NULL, &err), NS_OK);
    CU_ASSERT_EQUAL(written.n, 3);
    char hex[NS_SHA256_HEX_LEN + 1];
    CU_ASSERT_EQUAL(ns_sha256_file(f1, hex, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ns_archive_list_find(&written, "data/src1.bin")->sha256, hex);
    CU_ASSERT_EQUAL(ns_archive_list_find(&written, "data/src1.bin")->size, 1500000);
    CU_ASSERT_STRING_EQUAL(ns_archive_list_find(&written, "sweep.yaml")->sha256, sha_of(yaml));
    /* SHA-256 of the empty string (FIPS 180-2 test vector) */
    CU_ASSERT_STRING_EQUAL(ns_archive_list_find(&written, "empty")->sha256,
                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ns_archive_list_free(&written);
    /* no temporary left beside the archive */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q 'rt.tar.gz.tmp'", tmp);
    CU_ASSERT_NOT_EQUAL(system(cmd), 0);

    char *dir = fresh_dir("rt_x");
    ns_archive_list l;
    CU_ASSERT_EQUAL_FATAL(ns_archive_extract(out, dir, &l, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(l.top, "rt");
    CU_ASSERT_EQUAL(l.n, 4); /* three members + the manifest */
    char *x1 = ns_path_join(dir, "data/src1.bin");
    char hex2[NS_SHA256_HEX_LEN + 1];
    CU_ASSERT_EQUAL(ns_sha256_file(x1, hex2, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(hex2, hex);
    CU_ASSERT_STRING_EQUAL(ns_archive_list_find(&l, "data/src1.bin")->sha256, hex);
    /* the manifest is sha256sum's format, sorted by name */
    char *m = ns_path_join(dir, NS_ARCHIVE_MANIFEST), *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(m, 0, &text, &len, &err), NS_OK);
    char want[512];
    snprintf(want, sizeof want, "%s  data/src1.bin\n%s  empty\n%s  sweep.yaml\n", hex,
             sha_of(""), sha_of(yaml));
    CU_ASSERT_STRING_EQUAL(text, want);
    ns_archive_check chk;
    CU_ASSERT_EQUAL(ns_archive_check_manifest(&l, text, len, &chk, &err), NS_OK);
    CU_ASSERT_EQUAL(chk.n, 0);
    CU_ASSERT_EQUAL(chk.n_listed, 3);
    CU_ASSERT_EQUAL(chk.n_members, 3);
    ns_archive_check_free(&chk);
    free(text);
    free(m);
    free(x1);
    ns_archive_list_free(&l);
    free(dir);
    free(f1);
    free(out);
}

static void test_write_errors(void)
{
    ns_err err;
    char *out = in_tmp("bad.tar.gz");
    unlink(out);
    ns_archive_source missing[] = {{"x", "/nonexistent/file", NULL, 0, 0}};
    CU_ASSERT_EQUAL(ns_archive_write(out, "t", missing, 1, NULL, NULL, &err), NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/file"));
    CU_ASSERT_FALSE(ns_file_exists(out));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q 'bad.tar.gz.tmp'", tmp);
    CU_ASSERT_NOT_EQUAL(system(cmd), 0); /* the temporary was removed */
    ns_archive_source dup[] = {{"a", NULL, "1", 1, 0}, {"a", NULL, "2", 1, 0}};
    CU_ASSERT_EQUAL(ns_archive_write(out, "t", dup, 2, NULL, NULL, &err), NS_ERR_INVALID);
    ns_archive_source unsafe[] = {{"../a", NULL, "1", 1, 0}};
    CU_ASSERT_EQUAL(ns_archive_write(out, "t", unsafe, 1, NULL, NULL, &err), NS_ERR_INVALID);
    ns_archive_source man[] = {{NS_ARCHIVE_MANIFEST, NULL, "1", 1, 0}};
    CU_ASSERT_EQUAL(ns_archive_write(out, "t", man, 1, NULL, NULL, &err), NS_ERR_INVALID);
    ns_archive_source ok[] = {{"a", NULL, "1", 1, 0}};
    CU_ASSERT_EQUAL(ns_archive_write("/nonexistent/dir/x.tar.gz", "t", ok, 1, NULL, NULL, &err),
                    NS_ERR_IO);
    CU_ASSERT_FALSE(ns_file_exists(out));
    free(out);
}

static void test_tamper(void)
{
    ns_err err;
    char *out = in_tmp("tamper.tar.gz");
    const char *a = "alpha\n", *b = "beta\n";
    char manifest[256];
    snprintf(manifest, sizeof manifest, "%s  a.txt\n%s  sub/b.txt\n", sha_of(a), sha_of(b));
    ns_archive_check chk;

    /* intact */
    raw_entry good[] = {{"t/", "", 'f'}, {"t/a.txt", a, 'f'}, {"t/sub/b.txt", b, 'f'},
                        {"t/MANIFEST.sha256", manifest, 'f'}};
    write_raw(out, good + 1, 3);
    CU_ASSERT_EQUAL_FATAL(extract_and_check(out, "tp0", &chk, &err), NS_OK);
    CU_ASSERT_EQUAL(chk.n, 0);
    ns_archive_check_free(&chk);

    /* one byte of a member changed */
    raw_entry changed[] = {{"t/a.txt", "alphA\n", 'f'}, {"t/sub/b.txt", b, 'f'},
                           {"t/MANIFEST.sha256", manifest, 'f'}};
    write_raw(out, changed, 3);
    CU_ASSERT_EQUAL_FATAL(extract_and_check(out, "tp1", &chk, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(chk.n, 1);
    CU_ASSERT_EQUAL(chk.items[0].kind, NS_ARCHIVE_MISMATCH);
    CU_ASSERT_STRING_EQUAL(chk.items[0].name, "a.txt");
    CU_ASSERT_STRING_EQUAL(chk.items[0].listed, sha_of(a));
    CU_ASSERT_STRING_EQUAL(chk.items[0].actual, sha_of("alphA\n"));
    char line[512];
    ns_archive_issue_describe(&chk.items[0], line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "member a.txt: SHA-256 differs"));
    ns_archive_check_free(&chk);

    /* a member missing, another one unlisted */
    raw_entry miss[] = {{"t/a.txt", a, 'f'}, {"t/extra", "x", 'f'},
                        {"t/MANIFEST.sha256", manifest, 'f'}};
    write_raw(out, miss, 3);
    CU_ASSERT_EQUAL_FATAL(extract_and_check(out, "tp2", &chk, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(chk.n, 2);
    CU_ASSERT_EQUAL(chk.items[0].kind, NS_ARCHIVE_MISSING);
    CU_ASSERT_STRING_EQUAL(chk.items[0].name, "sub/b.txt");
    CU_ASSERT_EQUAL(chk.items[1].kind, NS_ARCHIVE_UNLISTED);
    CU_ASSERT_STRING_EQUAL(chk.items[1].name, "extra");
    ns_archive_check_free(&chk);

    /* no manifest at all */
    write_raw(out, good + 1, 2);
    CU_ASSERT_EQUAL_FATAL(extract_and_check(out, "tp3", &chk, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(chk.n, 1);
    CU_ASSERT_EQUAL(chk.items[0].kind, NS_ARCHIVE_NO_MANIFEST);
    ns_archive_check_free(&chk);

    /* unsafe entries are refused before anything is trusted */
    raw_entry up[] = {{"t/../evil", "x", 'f'}};
    write_raw(out, up, 1);
    CU_ASSERT_EQUAL(extract_and_check(out, "tp4", &chk, &err), NS_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unsafe member name"));
    raw_entry link[] = {{"t/a.txt", "/etc/passwd", 'l'}};
    write_raw(out, link, 1);
    CU_ASSERT_EQUAL(extract_and_check(out, "tp5", &chk, &err), NS_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a regular file"));
    raw_entry two[] = {{"t/a.txt", a, 'f'}, {"u/b.txt", b, 'f'}};
    write_raw(out, two, 2);
    CU_ASSERT_EQUAL(extract_and_check(out, "tp6", &chk, &err), NS_ERR_FORMAT);
    raw_entry twice[] = {{"t/a.txt", a, 'f'}, {"t/a.txt", b, 'f'}};
    write_raw(out, twice, 2);
    CU_ASSERT_EQUAL(extract_and_check(out, "tp7", &chk, &err), NS_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "appears twice"));
    /* not an archive */
    write_text(out, "this is not a tar file\n");
    CU_ASSERT_EQUAL(extract_and_check(out, "tp8", &chk, &err), NS_ERR_FORMAT);
    char *dir = fresh_dir("tp9");
    ns_archive_list l;
    CU_ASSERT_EQUAL(ns_archive_extract("/nonexistent.tar.gz", dir, &l, &err), NS_ERR_IO);
    free(dir);
    free(out);
}

static void test_manifest_lines(void)
{
    ns_err err;
    ns_archive_list l;
    memset(&l, 0, sizeof l);
    ns_archive_member m[2] = {{"a", "", 1}, {"b", "", 1}};
    snprintf(m[0].sha256, sizeof m[0].sha256, "%s", sha_of("a"));
    snprintf(m[1].sha256, sizeof m[1].sha256, "%s", sha_of("b"));
    l.items = m;
    l.n = 2;
    char text[512];
    /* binary-mode marker accepted, blank lines ignored, a bad line and a duplicate reported */
    snprintf(text, sizeof text, "%s *a\n\n%s  b\nnot a manifest line\n%s  b\n", sha_of("a"),
             sha_of("b"), sha_of("b"));
    ns_archive_check chk;
    CU_ASSERT_EQUAL_FATAL(ns_archive_check_manifest(&l, text, strlen(text), &chk, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(chk.n, 2);
    CU_ASSERT_EQUAL(chk.items[0].kind, NS_ARCHIVE_BAD_LINE);
    CU_ASSERT_EQUAL(chk.items[1].kind, NS_ARCHIVE_DUPLICATE);
    CU_ASSERT_EQUAL(chk.n_listed, 3);
    ns_archive_check_free(&chk);
    /* CRLF line ends: the names carry '\r', so a is missing and unlisted and b's line is
     * malformed; every description stays one line (the control character shown as '?') */
    snprintf(text, sizeof text, "%s  a\r\nbad line\r\n", sha_of("a"));
    CU_ASSERT_EQUAL_FATAL(ns_archive_check_manifest(&l, text, strlen(text), &chk, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(chk.n, 4);
    const char *want[4] = {"member a?: listed in the manifest but missing from the archive",
                           "MANIFEST.sha256: malformed line 'bad line?'",
                           "member a: in the archive but not listed in the manifest",
                           "member b: in the archive but not listed in the manifest"};
    int seen[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < chk.n; i++) {
        char line[512];
        ns_archive_issue_describe(&chk.items[i], line, sizeof line);
        CU_ASSERT_PTR_NULL(strpbrk(line, "\r\n"));
        for (size_t k = 0; k < 4; k++)
            seen[k] += strcmp(line, want[k]) == 0;
    }
    for (size_t k = 0; k < 4; k++)
        CU_ASSERT_EQUAL(seen[k], 1);
    ns_archive_check_free(&chk);
    /* an uppercase sum is not the format we write: reported as malformed, not silently accepted */
    char up[128];
    snprintf(up, sizeof up, "%s  a\n", sha_of("a"));
    for (char *p = up; *p != ' '; p++)
        if (*p >= 'a' && *p <= 'f')
            *p = (char)(*p - 32);
    CU_ASSERT_EQUAL_FATAL(ns_archive_check_manifest(&l, up, strlen(up), &chk, &err), NS_OK);
    CU_ASSERT_EQUAL(chk.n, 3); /* the bad line, then a and b unlisted */
    ns_archive_check_free(&chk);
}

static void test_nc_read(void)
{
    ns_err err;
    char *nc = in_tmp("attrs.nc");
    ns_nc_dim dims[] = {{"shard", 3}, {"L", 2}};
    int32_t L[2] = {16, 48};
    ns_nc_var vars[] = {{.name = "L", .type = NS_NC_INT, .ndims = 1, .dims = {"L"}, .data = L}};
    ns_nc_var_text(&vars[0], "long_name", "context length");
    ns_nc_attr attrs[] = {{.name = "sweep_yaml", .text = "model: gpt2\nseed: 7\n"},
                          {.name = "model_sha256", .text = "abc"},
                          {.name = "shard_count", .ival = 3},
                          {.name = "ks_alpha", .is_double = 1, .dval = 0.01}};
    ns_nc_desc desc = {dims, 2, vars, 1, attrs, 4, 0};
    CU_ASSERT_EQUAL_FATAL(ns_nc_write(nc, &desc, &err), NS_OK);
    ns_nc_info info;
    CU_ASSERT_EQUAL_FATAL(ns_nc_info_read(nc, &info, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ns_nc_info_text(&info, "sweep_yaml"), "model: gpt2\nseed: 7\n");
    CU_ASSERT_STRING_EQUAL(ns_nc_info_text(&info, "model_sha256"), "abc");
    CU_ASSERT_PTR_NULL(ns_nc_info_text(&info, "shard_count"));
    CU_ASSERT_PTR_NULL(ns_nc_info_text(&info, "nope"));
    long long v = 0;
    CU_ASSERT_TRUE(ns_nc_info_int(&info, "shard_count", &v));
    CU_ASSERT_EQUAL(v, 3);
    CU_ASSERT_FALSE(ns_nc_info_int(&info, "model_sha256", &v));
    double d = 0;
    CU_ASSERT_TRUE(ns_nc_info_double(&info, "ks_alpha", &d));
    CU_ASSERT_EQUAL(d, 0.01);
    CU_ASSERT_FALSE(ns_nc_info_double(&info, "shard_count", &d));
    ns_nc_info_free(&info);
    char *bad = in_tmp("notnc.nc");
    write_text(bad, "plain text\n");
    CU_ASSERT_EQUAL(ns_nc_info_read(bad, &info, &err), NS_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad));
    CU_ASSERT_EQUAL(ns_nc_info_read("/nonexistent.nc", &info, &err), NS_ERR_IO);
    free(bad);
    free(nc);
}

static void test_compare(void)
{
    double a[6] = {1.0, 0.0, NAN, INFINITY, 1e-9, 1000.0};
    double b[6] = {1.0, 0.0, NAN, INFINITY, 1e-9, 1000.0};
    size_t first;
    CU_ASSERT_EQUAL(ns_verify_compare(a, b, 6, 1, 0, &first), 0);
    CU_ASSERT_EQUAL(first, 6);
    b[0] = nextafter(1.0, 2.0); /* one ulp: a difference in exact mode only */
    CU_ASSERT_EQUAL(ns_verify_compare(a, b, 6, 1, 0, &first), 1);
    CU_ASSERT_EQUAL(first, 0);
    CU_ASSERT_EQUAL(ns_verify_compare(a, b, 6, 0, 1e-4, NULL), 0);
    /* relative above 1: 1000 vs 1000.05 is 5e-5 relative (passes 1e-4), 1000.2 is 2e-4 (fails) */
    b[5] = 1000.05;
    CU_ASSERT_EQUAL(ns_verify_compare(a, b, 6, 0, 1e-4, NULL), 0);
    b[5] = 1000.2;
    CU_ASSERT_EQUAL(ns_verify_compare(a, b, 6, 0, 1e-4, &first), 1);
    CU_ASSERT_EQUAL(first, 5);
    b[5] = 1000.0;
    /* absolute below 1: 1e-9 vs 5e-5 differs by < 1e-4 (passes), vs 2e-4 fails */
    b[4] = 5e-5;
    CU_ASSERT_EQUAL(ns_verify_compare(a, b, 6, 0, 1e-4, NULL), 0);
    b[4] = 2e-4;
    CU_ASSERT_EQUAL(ns_verify_compare(a, b, 6, 0, 1e-4, NULL), 1);
    b[4] = 1e-9;
    /* NaN only matches NaN, infinity only itself */
    b[2] = 0.0;
    CU_ASSERT_EQUAL(ns_verify_compare(a, b, 6, 0, 1e-4, &first), 1);
    CU_ASSERT_EQUAL(first, 2);
    b[2] = NAN;
    b[3] = 1e300;
    CU_ASSERT_EQUAL(ns_verify_compare(a, b, 6, 0, 1e-4, &first), 1);
    CU_ASSERT_EQUAL(first, 3);
}

/* ---- ns_nc_check: a file against its description ---------------------------------------------- */

#define MAX_ITEMS 32
typedef struct seen_items {
    size_t n;
    char text[MAX_ITEMS][400];
} seen_items;

/* Each difference as "KIND VAR:ATTR WHAT have|want" (the fields that are set). */
static void collect(void *user, const ns_nc_check_item *it)
{
    seen_items *s = user;
    static const char *const kinds[] = {"?", "DIFFERS", "MISSING", "EXTRA", "SHAPE"};
    if (s->n < MAX_ITEMS)
        snprintf(s->text[s->n++], sizeof s->text[0], "%s %s:%s %s %s|%s", kinds[it->kind],
                 it->var ? it->var : "", it->attr ? it->attr : "", it->what ? it->what : "",
                 it->have ? it->have : "", it->want ? it->want : "");
}

static int saw(const seen_items *s, const char *text)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->text[i], text) == 0)
            return 1;
    return 0;
}

static size_t check_file(const char *path, const ns_nc_desc *d, seen_items *s, ns_nc_check_counts *c)
{
    int ncid;
    ns_err err;
    memset(s, 0, sizeof *s);
    CU_ASSERT_EQUAL_FATAL(nc_open(path, NC_NOWRITE, &ncid), NC_NOERR);
    CU_ASSERT_EQUAL(ns_nc_check_layout(ncid, d, collect, s, c, &err), NS_OK);
    nc_close(ncid);
    return c->n_diff;
}

/* A written file matches its description exactly; every kind of edit made to it afterwards with
 * the NetCDF library (what a forger would do) is reported by name, with both values. */
static void test_nc_check(void)
{
    ns_err err;
    char *nc = in_tmp("layout.nc");
    ns_nc_dim dims[] = {{"L", 2}, {"T", 3}};
    int32_t L[2] = {8, 32}, cnt[2] = {4, 5};
    double x[6] = {1, 2, 3, 4, 5, 6};
    ns_nc_var vars[] = {
        {.name = "L", .type = NS_NC_INT, .ndims = 1, .dims = {"L"}, .data = L},
        {.name = "x", .type = NS_NC_DOUBLE, .ndims = 2, .dims = {"L", "T"}, .data = x},
        {.name = "count", .type = NS_NC_INT, .ndims = 1, .dims = {"L"}, .data = cnt,
         .fill = NS_FILL_NONE},
    };
    ns_nc_var_text(&vars[0], "long_name", "context length");
    ns_nc_var_text(&vars[1], "long_name", "a metric");
    ns_nc_var_text(&vars[1], "units", "1");
    ns_nc_var_text(&vars[2], "long_name", "rows");
    ns_nc_attr attrs[] = {{.name = "title", .text = "original"},
                          {.name = "metrics_version", .ival = 2, .is_int32 = 1},
                          {.name = "rows", .ival = 2},
                          {.name = "ks_alpha", .is_double = 1, .dval = 0.01}};
    ns_nc_desc desc = {dims, 2, vars, 3, attrs, 4, 0};
    CU_ASSERT_EQUAL_FATAL(ns_nc_write(nc, &desc, &err), NS_OK);
    seen_items s;
    ns_nc_check_counts c;
    CU_ASSERT_EQUAL(check_file(nc, &desc, &s, &c), 0);
    CU_ASSERT_EQUAL(c.global_attrs, 4);
    CU_ASSERT_EQUAL(c.vars, 3);
    CU_ASSERT_EQUAL(c.var_attrs, 5); /* L: long_name; x: long_name, units, _FillValue; count */
    /* the description says the data are uncompressed: x is stored compressed */
    desc.uncompressed = 1;
    CU_ASSERT_EQUAL(check_file(nc, &desc, &s, &c), 2);
    CU_ASSERT_TRUE(saw(&s, "SHAPE x: variable filters shuffle, deflate level 1|no filter"));
    CU_ASSERT_TRUE(saw(&s, "SHAPE count: variable filters shuffle, deflate level 1|no filter"));
    desc.uncompressed = 0;

    int ncid, id, grp;
    CU_ASSERT_EQUAL_FATAL(nc_open(nc, NC_WRITE, &ncid), NC_NOERR);
    CU_ASSERT_EQUAL(nc_redef(ncid), NC_NOERR);
    CU_ASSERT_EQUAL(nc_put_att_text(ncid, NC_GLOBAL, "title", 6, "forged"), NC_NOERR);
    int two = 2;
    CU_ASSERT_EQUAL(nc_put_att_int(ncid, NC_GLOBAL, "rows", NC_INT, 1, &two), NC_NOERR);
    double alpha = 0.05;
    CU_ASSERT_EQUAL(nc_put_att_double(ncid, NC_GLOBAL, "metrics_version", NC_DOUBLE, 1, &alpha),
                    NC_NOERR);
    CU_ASSERT_EQUAL(nc_del_att(ncid, NC_GLOBAL, "ks_alpha"), NC_NOERR);
    CU_ASSERT_EQUAL(nc_put_att_text(ncid, NC_GLOBAL, "extra", 3, "yes"), NC_NOERR);
    CU_ASSERT_EQUAL(nc_inq_varid(ncid, "x", &id), NC_NOERR);
    CU_ASSERT_EQUAL(nc_put_att_text(ncid, id, "units", 1, "m"), NC_NOERR);
    CU_ASSERT_EQUAL(nc_put_att_text(ncid, id, "note", 4, "gpt2"), NC_NOERR);
    int dimid;
    CU_ASSERT_EQUAL(nc_inq_dimid(ncid, "L", &dimid), NC_NOERR);
    CU_ASSERT_EQUAL(nc_def_var(ncid, "y", NC_FLOAT, 1, &dimid, &id), NC_NOERR);
    CU_ASSERT_EQUAL(nc_def_grp(ncid, "hidden", &grp), NC_NOERR);
    CU_ASSERT_EQUAL(nc_close(ncid), NC_NOERR);
    CU_ASSERT_EQUAL(check_file(nc, &desc, &s, &c), 9);
    CU_ASSERT_TRUE(saw(&s, "DIFFERS :title attribute \"forged\"|\"original\""));
    CU_ASSERT_TRUE(saw(&s, "DIFFERS :rows attribute a 32-bit integer 2|a 64-bit integer 2"));
    CU_ASSERT_TRUE(saw(&s, "DIFFERS :metrics_version attribute a double 0.05|a 32-bit integer 2"));
    CU_ASSERT_TRUE(saw(&s, "MISSING :ks_alpha attribute |0.01"));
    CU_ASSERT_TRUE(saw(&s, "EXTRA :extra attribute \"yes\"|"));
    CU_ASSERT_TRUE(saw(&s, "DIFFERS x:units attribute \"m\"|\"1\""));
    CU_ASSERT_TRUE(saw(&s, "EXTRA x:note attribute \"gpt2\"|"));
    CU_ASSERT_TRUE(saw(&s, "EXTRA : variable y|"));
    CU_ASSERT_TRUE(saw(&s, "EXTRA : group hidden|"));
    free(nc);
}

/* The history line a run segment writes, parsed from the right: a command holding " on " keeps
 * it. */
static void test_history_line(void)
{
    ns_history_line h;
    const char *hist = "2026-01-01T00:00:00Z normsweep 0.1.0 (git 0123456789ab): normsweep run "
                       "a.yaml on 4 ranks (host n1)\n2026-01-02T00:00:00Z normsweep 0.1.1 (git "
                       "ba9876543210-dirty): mpirun -np 2 normsweep run on 3 ranks.yaml on 2 ranks "
                       "(host n2, job 5) [resumed]; journal segment 2\n";
    CU_ASSERT_TRUE(ns_archive_history_last(hist, &h));
    CU_ASSERT_STRING_EQUAL(h.time, "2026-01-02T00:00:00Z");
    CU_ASSERT_STRING_EQUAL(h.version, "0.1.1");
    CU_ASSERT_STRING_EQUAL(h.git, "ba9876543210-dirty");
    CU_ASSERT_STRING_EQUAL(h.command, "mpirun -np 2 normsweep run on 3 ranks.yaml");
    CU_ASSERT_EQUAL(h.ranks, 2);
    CU_ASSERT_FALSE(ns_archive_history_last("not a history line\n", &h));
    CU_ASSERT_FALSE(ns_archive_history_last("", &h));
    CU_ASSERT_FALSE(ns_archive_history_last(NULL, &h));
}

/* Members keep their permissions; the archive is no more readable than its most private member;
 * a source that is a symbolic link is refused and nothing is written. */
static void test_modes_and_links(void)
{
    ns_err err;
    char *priv = in_tmp("private.log"), *pub = in_tmp("public.log"), *out = in_tmp("m.tar.gz");
    write_text(priv, "secret\n");
    write_text(pub, "open\n");
    CU_ASSERT_EQUAL(chmod(priv, 0600), 0);
    CU_ASSERT_EQUAL(chmod(pub, 0644), 0);
    ns_archive_source src[] = {{"logs/private.log", priv, NULL, 0, 0},
                               {"logs/public.log", pub, NULL, 0, 0},
                               {"sweep.yaml", NULL, "x: 1\n", 5, 0640}};
    CU_ASSERT_EQUAL_FATAL(ns_archive_write(out, "m", src, 3, NULL, NULL, &err), NS_OK);
    struct stat st;
    CU_ASSERT_EQUAL(stat(out, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0077, 0); /* 0600 at most: one member is private */
    struct archive *a = archive_read_new();
    archive_read_support_filter_gzip(a);
    archive_read_support_format_tar(a);
    CU_ASSERT_EQUAL_FATAL(archive_read_open_filename(a, out, 65536), ARCHIVE_OK);
    struct archive_entry *e;
    int found = 0;
    while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
        const char *n = archive_entry_pathname(e);
        unsigned perm = (unsigned)archive_entry_perm(e);
        if (strcmp(n, "m/logs/private.log") == 0)
            found += perm == 0600;
        else if (strcmp(n, "m/logs/public.log") == 0)
            found += perm == 0644;
        else if (strcmp(n, "m/sweep.yaml") == 0)
            found += perm == 0640;
        else if (strcmp(n, "m/MANIFEST.sha256") == 0)
            found += (perm & 0077) == 0;
    }
    archive_read_free(a);
    CU_ASSERT_EQUAL(found, 4);
    char *link = in_tmp("link.log"), *out2 = in_tmp("l.tar.gz");
    unlink(link);
    CU_ASSERT_EQUAL(symlink(priv, link), 0);
    ns_archive_source lsrc[] = {{"logs/link.log", link, NULL, 0, 0}};
    CU_ASSERT_EQUAL(ns_archive_write(out2, "l", lsrc, 1, NULL, NULL, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "symbolic link"));
    CU_ASSERT_FALSE(ns_file_exists(out2));
    free(priv), free(pub), free(out), free(link), free(out2);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/ns_test_archive.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("archive", NULL, NULL);
    CU_add_test(s, "member names", test_name_ok);
    CU_add_test(s, "write/extract round trip", test_round_trip);
    CU_add_test(s, "write errors leave nothing behind", test_write_errors);
    CU_add_test(s, "tamper detection", test_tamper);
    CU_add_test(s, "manifest lines", test_manifest_lines);
    CU_add_test(s, "NetCDF attributes", test_nc_read);
    CU_add_test(s, "payload comparison", test_compare);
    CU_add_test(s, "a NetCDF file against its description", test_nc_check);
    CU_add_test(s, "run history lines", test_history_line);
    CU_add_test(s, "member permissions and links", test_modes_and_links);
    int rc = ns_test_run_all();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    return rc;
}
