/* test_assets: manifest parsing, fetching from a temporary mirror (symlink and copy), checksum
 * rejection, missing mirror files, failing downloads, stamps vs verify, path resolution and the
 * gpt2 -> stand-in style fallback, all on small files made here (never the real 46 MB model). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets/ns_assets.h"
#include "common/ns_error.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "ns_test.h"

/* An address where nothing listens: connections are refused at once, on any machine. */
#define DEAD_URL "http://127.0.0.1:1/config.json"


/* Fetching allowed, lines dropped. */
static const ns_assets_fetch fetch_quiet = {.allow = 1, .log = NULL, .log_user = NULL};

/* A log callback appending to a 4096-byte buffer (user). */
static void collect_log(void *user, const char *line)
{
    char *buf = user;
    size_t n = strlen(buf);
    snprintf(buf + n, 4096 - n, "%s\n", line);
}

static char base[256];
static char mirror[300];
static char manifest_path[300];

static const char ENCODER[] = "{\"!\": 0, \"a\": 1}\n";
static const char VOCAB[] = "#version: 0.2\na b\n";
static const char CORPUS[] = "Well, Prince, so Genoa and Lucca are now just family estates.\n";
static const char CONFIG[] = "{\"n_layer\": 1}\n";
static const char MODEL[] = "not really safetensors, but 46 bytes of bytes.";
static const char MERGES[] = "#version: 0.2\nc d\n";
static const char GOOD[] = "the content the manifest pins\n";
static const char BAD[] = "some other content in the mirror\n";
static const char UNPINNED[] = "no checksum in the manifest for me\n";

static char sha_vocab[65], sha_corpus[65], sha_model[65], sha_merges[65], sha_good[65], sha_bad[65],
    sha_encoder[65], sha_config[65], sha_unpinned[65];

static void write_text(const char *dir, const char *name, const char *text)
{
    char *p = ns_path_join(dir, name);
    ns_err err;
    if (!p || ns_file_write_atomic(p, text, strlen(text), &err) != NS_OK) {
        fprintf(stderr, "cannot write %s/%s\n", dir, name);
        exit(1);
    }
    free(p);
}

static void sha_of(const char *text, char out[65])
{
    ns_err err;
    if (ns_sha256_buffer(text, strlen(text), out, &err) != NS_OK)
        exit(1);
}

static void make_fixture(void)
{
    char d[400];
    ns_err err;
    snprintf(mirror, sizeof mirror, "%s/mirror", base);
    snprintf(d, sizeof d, "%s/tok", mirror);
    ns_file_mkdirs(d, &err);
    write_text(d, "encoder.json", ENCODER);
    write_text(d, "vocab.bpe", VOCAB);
    snprintf(d, sizeof d, "%s/standin", mirror);
    ns_file_mkdirs(d, &err);
    write_text(d, "config.json", CONFIG);
    write_text(d, "model.safetensors", MODEL);
    write_text(d, "merges.txt", MERGES);
    write_text(mirror, "corpus.txt", CORPUS);
    write_text(mirror, "bad.txt", BAD);
    write_text(mirror, "u.txt", UNPINNED);
    sha_of(ENCODER, sha_encoder);
    sha_of(VOCAB, sha_vocab);
    sha_of(CORPUS, sha_corpus);
    sha_of(CONFIG, sha_config);
    sha_of(MODEL, sha_model);
    sha_of(MERGES, sha_merges);
    sha_of(GOOD, sha_good);
    sha_of(BAD, sha_bad);
    sha_of(UNPINNED, sha_unpinned);

    char json[8192];
    snprintf(json, sizeof json,
             "{\"format\": \"normsweep-assets-1\", \"sets\": [\n"
             " {\"name\": \"tok\", \"kind\": \"tokenizer\", \"dir\": \"tokdir\", \"main_file\": \"vocab.bpe\",\n"
             "  \"files\": [{\"name\": \"encoder.json\", \"sha256\": \"%s\", \"mirror_path\": \"tok/encoder.json\"},\n"
             "             {\"name\": \"vocab.bpe\", \"sha256\": \"%s\", \"size\": %zu, \"mirror_path\": \"tok/vocab.bpe\"}]},\n"
             " {\"name\": \"corp\", \"kind\": \"corpus\", \"dir\": \"corpus\", \"main_file\": \"corpus.txt\",\n"
             "  \"files\": [{\"name\": \"corpus.txt\", \"sha256\": \"%s\", \"mirror_path\": \"corpus.txt\"}]},\n"
             " {\"name\": \"standin\", \"kind\": \"model\", \"main_file\": \"model.safetensors\", \"fetch\": \"if-available\",\n"
             "  \"files\": [{\"name\": \"config.json\", \"sha256\": \"%s\", \"mirror_path\": \"standin/config.json\"},\n"
             "             {\"name\": \"model.safetensors\", \"sha256\": \"%s\", \"mirror_path\": \"standin/model.safetensors\"},\n"
             "             {\"name\": \"merges.txt\", \"sha256\": \"%s\", \"mirror_path\": \"standin/merges.txt\"}]},\n"
             " {\"name\": \"real\", \"kind\": \"model\", \"main_file\": \"config.json\", \"fetch\": \"if-available\",\n"
             "  \"fallback\": \"standin\",\n"
             "  \"files\": [{\"name\": \"config.json\", \"sha256\": \"%s\", \"mirror_path\": \"real/config.json\",\n"
             "              \"urls\": [\"" DEAD_URL "\"]}]},\n"
             " {\"name\": \"bad\", \"kind\": \"corpus\", \"main_file\": \"bad.txt\",\n"
             "  \"files\": [{\"name\": \"bad.txt\", \"sha256\": \"%s\", \"mirror_path\": \"bad.txt\"}]},\n"
             " {\"name\": \"gone\", \"kind\": \"corpus\", \"main_file\": \"gone.txt\",\n"
             "  \"files\": [{\"name\": \"gone.txt\", \"sha256\": \"%s\", \"mirror_path\": \"gone.txt\"}]},\n"
             " {\"name\": \"unpinned\", \"kind\": \"data\", \"main_file\": \"u.txt\",\n"
             "  \"files\": [{\"name\": \"u.txt\", \"sha256\": \"unknown\", \"mirror_path\": \"u.txt\"}]}\n"
             "]}\n",
             sha_encoder, sha_vocab, strlen(VOCAB), sha_corpus, sha_config, sha_model, sha_merges,
             sha_config, sha_good, sha_good);
    write_text(base, "manifest.json", json);
    snprintf(manifest_path, sizeof manifest_path, "%s/manifest.json", base);
}

/* A fresh context on assets directory base/<sub>, with the fixture mirror, quiet. */
static void ctx_for(ns_assets_ctx *ctx, const char *sub)
{
    char dir[400];
    ns_err err;
    snprintf(dir, sizeof dir, "%s/%s", base, sub);
    int rc = ns_assets_ctx_init(ctx, dir, mirror, &err);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    ctx->offline = 0;
    ctx->log = NULL;
}

static void load_manifest(ns_manifest *m)
{
    ns_err err;
    int rc = ns_manifest_load(manifest_path, m, &err);
    if (rc != NS_OK)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
}

static int read_back(const char *path, const char *expect)
{
    char *data = NULL;
    size_t len = 0;
    ns_err err;
    if (ns_file_read_all(path, 0, &data, &len, &err) != NS_OK)
        return 0;
    int same = len == strlen(expect) && memcmp(data, expect, len) == 0;
    free(data);
    return same;
}

/* Number of directory entries other than ".", ".." and the stamp; -1 if dir is absent. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            strcmp(e->d_name, ".normsweep-verified"))
            n++;
    closedir(d);
    return n;
}

static void test_manifest_parses_and_rejects(void)
{
    ns_manifest m;
    load_manifest(&m);
    CU_ASSERT_EQUAL(m.n_sets, 7);
    const ns_asset_set *real = ns_manifest_find(&m, "real");
    CU_ASSERT_PTR_NOT_NULL_FATAL(real);
    CU_ASSERT_STRING_EQUAL(real->fallback, "standin");
    CU_ASSERT_EQUAL(real->if_available, 1);
    CU_ASSERT_EQUAL(real->files[0].n_urls, 1);
    const ns_asset_set *tok = ns_manifest_find(&m, "tok");
    CU_ASSERT_EQUAL(tok->if_available, 0);
    CU_ASSERT_EQUAL(tok->files[1].size, (long long)strlen(VOCAB));
    CU_ASSERT_EQUAL(tok->files[0].size, -1);
    CU_ASSERT_STRING_EQUAL(ns_manifest_find(&m, "standin")->dir, "standin"); /* dir defaults to name */
    CU_ASSERT_STRING_EQUAL(ns_manifest_find(&m, "unpinned")->files[0].sha256, "");
    CU_ASSERT_PTR_NULL(ns_manifest_find(&m, "nosuch"));
    ns_manifest_free(&m);

    /* malformed JSON: format error naming file and line */
    write_text(base, "broken.json", "{\"format\": \"normsweep-assets-1\",\n \"sets\": [\n");
    char p[400];
    snprintf(p, sizeof p, "%s/broken.json", base);
    ns_err err;
    CU_ASSERT_EQUAL(ns_manifest_load(p, &m, &err), NS_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "broken.json:"));
    /* a fallback naming no set, and a bad checksum string */
    write_text(base, "fb.json",
               "{\"format\": \"normsweep-assets-1\", \"sets\": [{\"name\": \"a\", \"kind\": \"model\","
               " \"main_file\": \"x\", \"fallback\": \"zz\", \"files\": [{\"name\": \"x\"}]}]}");
    snprintf(p, sizeof p, "%s/fb.json", base);
    CU_ASSERT_EQUAL(ns_manifest_load(p, &m, &err), NS_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "fallback \"zz\""));
    write_text(base, "sha.json",
               "{\"format\": \"normsweep-assets-1\", \"sets\": [{\"name\": \"a\", \"kind\": \"model\","
               " \"main_file\": \"x\", \"files\": [{\"name\": \"x\", \"sha256\": \"abc\"}]}]}");
    snprintf(p, sizeof p, "%s/sha.json", base);
    CU_ASSERT_EQUAL(ns_manifest_load(p, &m, &err), NS_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "64 hex digits"));
    /* a mirror path escaping the mirror */
    write_text(base, "esc.json",
               "{\"format\": \"normsweep-assets-1\", \"sets\": [{\"name\": \"a\", \"kind\": \"model\","
               " \"main_file\": \"x\", \"files\": [{\"name\": \"x\", \"mirror_path\": \"../etc/x\"}]}]}");
    snprintf(p, sizeof p, "%s/esc.json", base);
    CU_ASSERT_EQUAL(ns_manifest_load(p, &m, &err), NS_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mirror_path"));
}

static void test_fetch_symlinks_from_mirror(void)
{
    ns_manifest m;
    load_manifest(&m);
    ns_assets_ctx ctx;
    ctx_for(&ctx, "a_link");
    ns_asset_ref ref;
    ns_err err;
    int rc = ns_assets_fetch_set(&ctx, ns_manifest_find(&m, "tok"), 1, &ref, &err);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.source, "mirror");
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_vocab);
    CU_ASSERT_STRING_EQUAL(ref.name, "tok");
    char want[512];
    snprintf(want, sizeof want, "%s/a_link/tokdir", base);
    CU_ASSERT_STRING_EQUAL(ref.path, want);
    snprintf(want, sizeof want, "%s/a_link/tokdir/vocab.bpe", base);
    CU_ASSERT_STRING_EQUAL(ref.main_file, want);
    struct stat sb;
    CU_ASSERT_EQUAL(lstat(want, &sb), 0);
    CU_ASSERT(S_ISLNK(sb.st_mode));
    char target[512] = "", real[512];
    ssize_t n = readlink(want, target, sizeof target - 1);
    CU_ASSERT(n > 0);
    target[n > 0 ? n : 0] = '\0';
    snprintf(want, sizeof want, "%s/tok/vocab.bpe", mirror);
    CU_ASSERT_PTR_NOT_NULL(realpath(want, real));
    CU_ASSERT_STRING_EQUAL(target, real);

    /* second time: already present, recorded in the stamp */
    rc = ns_assets_fetch_set(&ctx, ns_manifest_find(&m, "tok"), 1, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.source, "assets-dir");
    ns_asset_file_state st;
    const ns_asset_set *tok = ns_manifest_find(&m, "tok");
    CU_ASSERT_EQUAL(ns_assets_file_state(&ctx, tok, &tok->files[0], &st, &err), NS_OK);
    CU_ASSERT_EQUAL(st.present, 1);
    CU_ASSERT_EQUAL(st.verified, 1);
    CU_ASSERT_EQUAL(st.is_link, 1);

    /* --copy turns the existing links into verified copies */
    ctx.copy = 1;
    rc = ns_assets_fetch_set(&ctx, tok, 1, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_OK);
    CU_ASSERT_EQUAL(lstat(ref.main_file, &sb), 0);
    CU_ASSERT(S_ISREG(sb.st_mode));
    CU_ASSERT(read_back(ref.main_file, VOCAB));
    ns_manifest_free(&m);
}

static void test_fetch_copies_from_mirror(void)
{
    ns_manifest m;
    load_manifest(&m);
    ns_assets_ctx ctx;
    ctx_for(&ctx, "a_copy");
    ctx.copy = 1;
    ns_asset_ref ref;
    ns_err err;
    int rc = ns_assets_fetch_set(&ctx, ns_manifest_find(&m, "corp"), 1, &ref, &err);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    char want[512];
    snprintf(want, sizeof want, "%s/a_copy/corpus/corpus.txt", base);
    CU_ASSERT_STRING_EQUAL(ref.path, want); /* a one-file corpus resolves to the file */
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_corpus);
    struct stat sb;
    CU_ASSERT_EQUAL(lstat(want, &sb), 0);
    CU_ASSERT(S_ISREG(sb.st_mode));
    CU_ASSERT(read_back(want, CORPUS));
    snprintf(want, sizeof want, "%s/a_copy/corpus", base);
    CU_ASSERT_EQUAL(count_entries(want), 1); /* no temporaries left */
    ns_manifest_free(&m);
}

static void test_checksum_mismatch_leaves_nothing(void)
{
    ns_manifest m;
    load_manifest(&m);
    for (int copy = 0; copy <= 1; copy++) {
        ns_assets_ctx ctx;
        ctx_for(&ctx, copy ? "a_bad_copy" : "a_bad_link");
        ctx.copy = copy;
        ns_asset_ref ref;
        ns_err err;
        int rc = ns_assets_fetch_set(&ctx, ns_manifest_find(&m, "bad"), 1, &ref, &err);
        CU_ASSERT_EQUAL(rc, NS_ERR_CHECKSUM);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad.txt"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, sha_bad));  /* what the file has */
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, sha_good)); /* what the manifest wants */
        char dir[512];
        snprintf(dir, sizeof dir, "%s/%s/bad", base, copy ? "a_bad_copy" : "a_bad_link");
        int n = count_entries(dir);
        CU_ASSERT(n <= 0); /* nothing left: no file, no temporary (the directory may be gone) */
    }
    ns_manifest_free(&m);
}

static void test_local_corruption_stamp_and_verify(void)
{
    ns_manifest m;
    load_manifest(&m);
    ns_assets_ctx ctx;
    ctx_for(&ctx, "a_corrupt");
    ctx.copy = 1;
    const ns_asset_set *corp = ns_manifest_find(&m, "corp");
    ns_asset_ref ref;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_assets_fetch_set(&ctx, corp, 1, &ref, &err), NS_OK);
    struct stat before;
    CU_ASSERT_EQUAL_FATAL(stat(ref.main_file, &before), 0);

    /* Same size, one byte changed, mtime put back: the stamp cannot tell, verify can. */
    char altered[sizeof CORPUS];
    memcpy(altered, CORPUS, sizeof CORPUS);
    altered[0] = 'w';
    int fd = open(ref.main_file, O_WRONLY);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, altered, strlen(altered)), (ssize_t)strlen(altered));
    close(fd);
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, ref.main_file, times, 0), 0);
    CU_ASSERT_EQUAL(ns_assets_fetch_set(&ctx, corp, 0, &ref, &err), NS_OK); /* trusted stamp */
    CU_ASSERT_EQUAL(ns_assets_verify_set(&ctx, corp, &err), NS_ERR_CHECKSUM);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, sha_corpus));
    CU_ASSERT(read_back(ref.main_file, altered)); /* verify leaves the file in place */

    /* verify dropped the stamp entry: now a no-fetch resolve rehashes and refuses ... */
    CU_ASSERT_EQUAL(ns_assets_fetch_set(&ctx, corp, 0, &ref, &err), NS_ERR_CHECKSUM);
    /* ... and a fetch replaces the bad copy */
    CU_ASSERT_EQUAL(ns_assets_fetch_set(&ctx, corp, 1, &ref, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.source, "mirror");
    CU_ASSERT(read_back(ref.main_file, CORPUS));
    CU_ASSERT_EQUAL(ns_assets_verify_set(&ctx, corp, &err), NS_OK);

    /* a changed mtime invalidates the stamp, so a plain resolve rehashes too */
    fd = open(ref.main_file, O_WRONLY);
    CU_ASSERT_EQUAL(write(fd, altered, strlen(altered)), (ssize_t)strlen(altered));
    close(fd);
    struct timespec later[2] = {{0, UTIME_OMIT}, {before.st_mtim.tv_sec + 100, 0}};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, ref.main_file, later, 0), 0);
    CU_ASSERT_EQUAL(ns_assets_fetch_set(&ctx, corp, 0, &ref, &err), NS_ERR_CHECKSUM);
    ns_manifest_free(&m);
}

static void test_missing_mirror_file(void)
{
    ns_manifest m;
    load_manifest(&m);
    ns_assets_ctx ctx;
    ctx_for(&ctx, "a_gone");
    ns_asset_ref ref;
    ns_err err;
    int rc = ns_assets_fetch_set(&ctx, ns_manifest_find(&m, "gone"), 1, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_IO);
    char want[512];
    snprintf(want, sizeof want, "%s/gone.txt", mirror);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no download URL"));
    /* no mirror configured at all */
    ctx.mirror_dir[0] = '\0';
    rc = ns_assets_fetch_set(&ctx, ns_manifest_find(&m, "tok"), 1, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no mirror directory"));
    /* without allow_fetch a missing file is an error that says how to fetch it */
    ctx_for(&ctx, "a_gone");
    rc = ns_assets_fetch_set(&ctx, ns_manifest_find(&m, "corp"), 0, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "normsweep assets fetch corp"));
    ns_manifest_free(&m);
}

static void test_download_failure_is_clear(void)
{
    ns_manifest m;
    load_manifest(&m);
    ns_assets_ctx ctx;
    ctx_for(&ctx, "a_dl");
    const ns_asset_set *real = ns_manifest_find(&m, "real");
    ns_asset_ref ref;
    ns_err err;
    int rc = ns_assets_fetch_set(&ctx, real, 1, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, DEAD_URL));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not in the mirror"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "real/config.json"));
    char dir[512];
    snprintf(dir, sizeof dir, "%s/a_dl/real", base);
    CU_ASSERT(count_entries(dir) <= 0);
    char why[1024];
    CU_ASSERT_EQUAL(ns_assets_set_available(&ctx, real, why, sizeof why), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "127.0.0.1"));
    CU_ASSERT_EQUAL(ns_assets_set_available(&ctx, ns_manifest_find(&m, "standin"), why, sizeof why), 1);
    ctx.offline = 1;
    rc = ns_assets_fetch_set(&ctx, real, 1, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "offline"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, DEAD_URL));
    CU_ASSERT_EQUAL(ns_assets_set_available(&ctx, real, why, sizeof why), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "offline"));
    ns_manifest_free(&m);
}

/* A sharded model directory given by path: its identity is the weights' (docs/ASSETS.md), the
 * SHA-256 of the sha256sum listing of the shards its index names, written out here line by line
 * in byte order of the names -- not the index's checksum. A shard named twice counts once; a
 * name with a directory and a missing shard are refused. */
static void test_resolve_sharded_path(void)
{
    static const char S1[] = "first shard's bytes\n", S2[] = "second shard, other bytes\n";
    char d[512], listing[512], s1[65], s2[65], want[65];
    ns_err err;
    ns_asset_ref ref;
    snprintf(d, sizeof d, "%s/sharded", base);
    CU_ASSERT_EQUAL_FATAL(ns_file_mkdirs(d, &err), NS_OK);
    write_text(d, "config.json", CONFIG);
    write_text(d, "model.safetensors.index.json",
               "{\"metadata\": {\"total_size\": 3}, \"weight_map\": {"
               "\"b.weight\": \"model-00002-of-00002.safetensors\", "
               "\"a.weight\": \"model-00001-of-00002.safetensors\", "
               "\"c.weight\": \"model-00001-of-00002.safetensors\"}}\n");
    write_text(d, "model-00001-of-00002.safetensors", S1);
    write_text(d, "model-00002-of-00002.safetensors", S2);
    sha_of(S1, s1);
    sha_of(S2, s2);
    snprintf(listing, sizeof listing, "%s  model-00001-of-00002.safetensors\n"
             "%s  model-00002-of-00002.safetensors\n", s1, s2);
    sha_of(listing, want);
    CU_ASSERT_EQUAL_FATAL(ns_assets_resolve(d, "model", NULL, &ref, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.sha256, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(ref.main_file, "/model.safetensors.index.json"));
    /* unhashed: nothing read */
    CU_ASSERT_EQUAL(ns_assets_resolve_unhashed(d, "model", NULL, &ref, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.sha256, "");
    /* a shard missing */
    char *p = ns_path_join(d, "model-00002-of-00002.safetensors");
    CU_ASSERT_EQUAL(unlink(p), 0);
    CU_ASSERT_EQUAL(ns_assets_resolve(d, "model", NULL, &ref, &err), NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model-00002-of-00002.safetensors"));
    free(p);
    /* a name that is not a plain shard file */
    write_text(d, "model.safetensors.index.json",
               "{\"weight_map\": {\"a.weight\": \"../model-00001-of-00002.safetensors\"}}\n");
    CU_ASSERT_EQUAL(ns_assets_resolve(d, "model", NULL, &ref, &err), NS_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a.weight"));
}

static void test_resolve_paths(void)
{
    ns_asset_ref ref;
    ns_err err;
    char p[512], real[512];
    snprintf(p, sizeof p, "%s/corpus.txt", mirror);
    CU_ASSERT_EQUAL_FATAL(ns_assets_resolve(p, "corpus", NULL, &ref, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.source, "path");
    CU_ASSERT_STRING_EQUAL(ref.name, "path");
    CU_ASSERT_STRING_EQUAL(ref.requested, p);
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_corpus);
    CU_ASSERT_EQUAL(ref.is_fallback, 0);
    CU_ASSERT_PTR_NOT_NULL(realpath(p, real));
    CU_ASSERT_STRING_EQUAL(ref.path, real);

    snprintf(p, sizeof p, "%s/standin", mirror);
    CU_ASSERT_EQUAL_FATAL(ns_assets_resolve(p, "model", NULL, &ref, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_model);
    CU_ASSERT_PTR_NOT_NULL(strstr(ref.main_file, "/model.safetensors"));
    /* a model directory used as tokenizer: identified by merges.txt */
    CU_ASSERT_EQUAL(ns_assets_resolve(p, "tokenizer", NULL, &ref, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_merges);
    CU_ASSERT_EQUAL(ns_assets_resolve(p, "corpus", NULL, &ref, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, p));
    snprintf(p, sizeof p, "%s/tok", mirror);
    CU_ASSERT_EQUAL(ns_assets_resolve(p, "model", NULL, &ref, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.safetensors"));
    CU_ASSERT_EQUAL(ns_assets_resolve(p, "tokenizer", NULL, &ref, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_vocab);
    CU_ASSERT_EQUAL(ns_assets_resolve("/nonexistent/dir/model", "model", &(ns_assets_fetch){.allow = 1}, &ref, &err), NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/dir/model"));
    CU_ASSERT_EQUAL(ns_assets_resolve(p, "weights", NULL, &ref, &err), NS_ERR_INVALID);

    /* unhashed: the same resolution, the checksum left to the caller */
    snprintf(p, sizeof p, "%s/standin", mirror);
    CU_ASSERT_EQUAL_FATAL(ns_assets_resolve_unhashed(p, "model", NULL, &ref, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.sha256, "");
    CU_ASSERT_STRING_EQUAL(ref.source, "path");
    CU_ASSERT_PTR_NOT_NULL(realpath(p, real));
    CU_ASSERT_STRING_EQUAL(ref.path, real);
    CU_ASSERT_PTR_NOT_NULL(strstr(ref.main_file, "/model.safetensors"));
    snprintf(p, sizeof p, "%s/tok", mirror);
    CU_ASSERT_EQUAL(ns_assets_resolve_unhashed(p, "model", NULL, &ref, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.safetensors"));
}

/* Through the environment, as the sweep calls it. */
static void test_resolve_names_and_fallback(void)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/a_env", base);
    setenv("NORMSWEEP_MANIFEST", manifest_path, 1);
    setenv("NORMSWEEP_ASSETS", dir, 1);
    setenv("NORMSWEEP_MIRROR", mirror, 1);
    unsetenv("NORMSWEEP_OFFLINE");
    ns_asset_ref ref;
    ns_err err;
    /* no fetch allowed and nothing present: neither the model nor its fallback */
    int rc = ns_assets_resolve("real", "model", NULL, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "fallback"));

    rc = ns_assets_resolve("real", "model", &fetch_quiet, &ref, &err);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    CU_ASSERT_EQUAL(ref.is_fallback, 1);
    CU_ASSERT_STRING_EQUAL(ref.requested, "real");
    CU_ASSERT_STRING_EQUAL(ref.name, "standin");
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_model);
    CU_ASSERT_STRING_EQUAL(ref.source, "mirror");
    char want[512];
    snprintf(want, sizeof want, "%s/standin", dir);
    CU_ASSERT_STRING_EQUAL(ref.path, want);

    rc = ns_assets_resolve("standin", "model", NULL, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_OK);
    CU_ASSERT_EQUAL(ref.is_fallback, 0);
    CU_ASSERT_STRING_EQUAL(ref.source, "assets-dir");
    /* a manifest asset is verified (here through its stamp) and keeps its checksum unhashed too */
    rc = ns_assets_resolve_unhashed("standin", "model", NULL, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_model);
    CU_ASSERT_STRING_EQUAL(ref.source, "assets-dir");
    rc = ns_assets_resolve("standin", "tokenizer", NULL, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_merges);
    CU_ASSERT_PTR_NOT_NULL(strstr(ref.main_file, "/merges.txt"));

    rc = ns_assets_resolve("corp", "corpus", &fetch_quiet, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_OK);
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_corpus);
    rc = ns_assets_resolve("corp", "model", &fetch_quiet, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is a corpus"));
    rc = ns_assets_resolve("nosuch", "model", &fetch_quiet, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "standin")); /* lists the model assets */
    /* a checksum failure is reported as such, also through resolve */
    setenv("NORMSWEEP_OFFLINE", "1", 1);
    rc = ns_assets_resolve("bad", "corpus", &fetch_quiet, &ref, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_CHECKSUM);
    unsetenv("NORMSWEEP_OFFLINE");
    unsetenv("NORMSWEEP_MANIFEST");
    unsetenv("NORMSWEEP_ASSETS");
    unsetenv("NORMSWEEP_MIRROR");
}

static void test_unpinned_checksum_is_computed_and_kept(void)
{
    ns_manifest m;
    load_manifest(&m);
    ns_assets_ctx ctx;
    ctx_for(&ctx, "a_unpinned");
    ctx.copy = 1;
    char logbuf[4096] = "";
    ctx.log = collect_log;
    ctx.log_user = logbuf;
    const ns_asset_set *u = ns_manifest_find(&m, "unpinned");
    ns_asset_ref ref;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_assets_fetch_set(&ctx, u, 1, &ref, &err), NS_OK);
    ctx.log = NULL;
    CU_ASSERT_STRING_EQUAL(ref.sha256, sha_unpinned);
    CU_ASSERT_PTR_NOT_NULL(strstr(logbuf, sha_unpinned)); /* printed on first fetch */
    CU_ASSERT_EQUAL(ns_assets_verify_set(&ctx, u, &err), NS_OK);
    write_text(ref.path, "u.txt", "changed\n");
    CU_ASSERT_EQUAL(ns_assets_verify_set(&ctx, u, &err), NS_ERR_CHECKSUM);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, sha_unpinned));
    ns_manifest_free(&m);
}

static void test_ctx_defaults(void)
{
    ns_assets_ctx ctx;
    ns_err err;
    char cwd[512], want[700];
    CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
    setenv("NORMSWEEP_ASSETS", "rel/assets/", 1);
    setenv("NORMSWEEP_MIRROR", "", 1);
    setenv("NORMSWEEP_OFFLINE", "1", 1);
    CU_ASSERT_EQUAL(ns_assets_ctx_init(&ctx, NULL, NULL, &err), NS_OK);
    snprintf(want, sizeof want, "%s/rel/assets", cwd);
    CU_ASSERT_STRING_EQUAL(ctx.assets_dir, want);
    CU_ASSERT_STRING_EQUAL(ctx.mirror_dir, "");
    CU_ASSERT_EQUAL(ctx.offline, 1);
    CU_ASSERT_EQUAL(ctx.connect_timeout_s, 10);
    unsetenv("NORMSWEEP_ASSETS");
    unsetenv("NORMSWEEP_OFFLINE");
    const char *home = getenv("HOME"), *xdg = getenv("XDG_CACHE_HOME");
    char *home_save = home ? strdup(home) : NULL, *xdg_save = xdg ? strdup(xdg) : NULL;
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/someone", 1);
    CU_ASSERT_EQUAL(ns_assets_ctx_init(&ctx, NULL, "/m", &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ctx.assets_dir, "/home/someone/.cache/normsweep/assets");
    CU_ASSERT_STRING_EQUAL(ctx.mirror_dir, "/m");
    CU_ASSERT_EQUAL(ctx.offline, 0);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    CU_ASSERT_EQUAL(ns_assets_ctx_init(&ctx, NULL, NULL, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(ctx.assets_dir, "/xdg/normsweep/assets");
    if (home_save)
        setenv("HOME", home_save, 1);
    else
        unsetenv("HOME");
    if (xdg_save)
        setenv("XDG_CACHE_HOME", xdg_save, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    unsetenv("NORMSWEEP_MIRROR");
    free(home_save);
    free(xdg_save);
}

int main(void)
{
    snprintf(base, sizeof base, "/tmp/ns_test_assets.%ld", (long)getpid());
    ns_err err;
    if (ns_file_mkdirs(base, &err) != NS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    make_fixture();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("assets", NULL, NULL);
    CU_add_test(s, "manifest parses; malformed ones are rejected", test_manifest_parses_and_rejects);
    CU_add_test(s, "fetch symlinks from the mirror, then --copy", test_fetch_symlinks_from_mirror);
    CU_add_test(s, "fetch copies from the mirror", test_fetch_copies_from_mirror);
    CU_add_test(s, "checksum mismatch: error, nothing kept", test_checksum_mismatch_leaves_nothing);
    CU_add_test(s, "stamp trusted, verify rehashes, fetch repairs",
                test_local_corruption_stamp_and_verify);
    CU_add_test(s, "missing mirror file names the path", test_missing_mirror_file);
    CU_add_test(s, "download failure and offline are clear", test_download_failure_is_clear);
    CU_add_test(s, "resolve existing paths", test_resolve_paths);
    CU_add_test(s, "a sharded model directory's identity", test_resolve_sharded_path);
    CU_add_test(s, "resolve names; fallback recorded", test_resolve_names_and_fallback);
    CU_add_test(s, "unpinned checksum computed, printed, kept", test_unpinned_checksum_is_computed_and_kept);
    CU_add_test(s, "context defaults from the environment", test_ctx_defaults);
    int failures = ns_test_run_all();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", base);
    return failures;
}
