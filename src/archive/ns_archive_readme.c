/* ns_archive_readme: the archive's README.txt (see header). */
#include "archive/ns_archive_readme.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/ns_archive_layout.h"
#include "archive/ns_archive_model.h"

/* A growing text. */
typedef struct text {
    char *s;
    size_t n, cap;
    int oom;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...)
{
    if (t->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    if (t->n + (size_t)k + 1 > t->cap) {
        size_t cap = (t->cap + (size_t)k + 1) * 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->oom = 1;
            return;
        }
        t->s = s, t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

static const char *attr(const ns_nc_info *info, const char *name)
{
    const char *v = ns_nc_info_text(info, name);
    return v && *v ? v : "unknown";
}

static long long attr_int(const ns_nc_info *info, const char *name)
{
    long long v;
    return ns_nc_info_int(info, name, &v) ? v : -1;
}

void ns_archive_launcher(const char *cmd, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!cmd)
        return;
    for (const char *p = cmd; *p;) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        size_t len = (size_t)(p - w);
        const char *base = w;
        for (const char *q = w; q < p; q++)
            if (*q == '/')
                base = q + 1;
        if ((size_t)(p - base) == 9 && strncmp(base, "normsweep", 9) == 0) {
            size_t keep = (size_t)(w - cmd);
            snprintf(buf, size, "%.*s", (int)(keep < size ? keep : size - 1), cmd);
            return;
        }
        if (!len)
            break;
    }
}

/* What each kind of member is. */
static const char *member_role(const char *name, const char *nc_member)
{
    if (strcmp(name, nc_member) == 0)
        return "the sweep's NetCDF output (CF-1.8; docs/OUTPUT.md)";
    if (strcmp(name, NS_ARCHIVE_SWEEP) == 0)
        return "the exact sweep text (identical to the NetCDF's sweep_yaml attribute)";
    if (strcmp(name, NS_ARCHIVE_PROVENANCE) == 0)
        return "provenance: the run's build and inputs, this archive's maker and machine";
    if (strcmp(name, NS_ARCHIVE_ASSETS) == 0)
        return "the asset manifest (download sources and SHA-256 of model, tokenizer, corpus)";
    if (strncmp(name, NS_ARCHIVE_CKPT_DIR "/journal", strlen(NS_ARCHIVE_CKPT_DIR "/journal")) == 0)
        return "the journal: every task's per-row values (what verify reduces again)";
    if (strncmp(name, NS_ARCHIVE_CKPT_DIR "/", strlen(NS_ARCHIVE_CKPT_DIR "/")) == 0)
        return "checkpoint directory file";
    if (strncmp(name, NS_ARCHIVE_REPORT_DIR "/", strlen(NS_ARCHIVE_REPORT_DIR "/")) == 0)
        return "the report (postprocess/report) made from the NetCDF";
    if (strncmp(name, NS_ARCHIVE_LOG_DIR "/", strlen(NS_ARCHIVE_LOG_DIR "/")) == 0)
        return "a log of the run";
    if (strncmp(name, NS_ARCHIVE_MODEL_DIR "/", strlen(NS_ARCHIVE_MODEL_DIR "/")) == 0)
        return "the model the run used (archive --with-model)";
    return "";
}

/* REPRODUCE of a format-2 archive (kept as it was: verify compares such an archive's README.txt
 * with this text). */
static void reproduce_v2(text *t, const ns_nc_info *info, const char *launcher,
                         const char *nc_member)
{
    add(t, "\nREPRODUCE\n"
        "1. Build normsweep %s (git %s) as its README says; `normsweep --version` tells.\n"
        "2. Make the inputs available with the SHA-256 above: `normsweep assets fetch` (the\n"
        "   manifest %s says where each file comes from), or a mirror directory\n"
        "   (NORMSWEEP_MIRROR).\n"
        "3. Run, from the extracted directory:\n"
        "     %snormsweep run %s --output %s --checkpoint-dir checkpoint-again\n"
        "   (any number of ranks gives the same data; `--resume` continues an interrupted run).\n"
        "4. Compare the data with the archived %s (e.g. with verify, or ncdump of both).\n",
        attr(info, "normsweep_version"), attr(info, "git_commit"), NS_ARCHIVE_ASSETS, launcher,
        NS_ARCHIVE_SWEEP, nc_member, nc_member);
}

/* The model's files and where a rerun needs them (packed or not). */
static void model_needs(text *t, const ns_model_files *mf)
{
    if (mf->path)
        add(t, "   model: the directory %s, which the sweep names (model.safetensors sha256\n"
            "   %s). %s\n", mf->path, mf->sha256,
            mf->packed ? "Its files are packed in this archive; put them there:"
                       : "Not in this archive (`normsweep archive --with-model` packs it); "
                         "put there:");
    else if (mf->fallback)
        add(t, "   model: %s, the fallback of %s, which the sweep names: the run used %s, and\n"
            "   so must a rerun, also where %s can be had. %s\n", mf->used, mf->requested, mf->used,
            mf->requested, mf->packed ? "Its files are packed in this archive:"
                                      : "Not in this archive (`normsweep archive --with-model` "
                                        "packs it); its files:");
    else
        add(t, "   model: %s. %s\n", mf->used,
            mf->packed ? "Its files are packed in this archive:"
                       : "Not in this archive (`normsweep archive --with-model` packs it); its "
                         "files:");
    for (size_t i = 0; i < mf->n; i++) {
        const ns_model_file *f = &mf->items[i];
        char size[32] = "";
        if (f->size >= 0)
            snprintf(size, sizeof size, "%lld bytes", f->size);
        add(t, "     %-40s %14s  sha256 %s\n", mf->packed ? f->member : f->place, size,
            f->sha256[0] ? f->sha256 : "(not recorded)");
    }
    if (mf->path && mf->packed)
        add(t, "   (copy %s/%s/* to %s; or, from a copy of sweep.yaml whose `model:` names the\n"
            "   packed directory, the rerun computes the same data and records that path).\n",
            NS_ARCHIVE_MODEL_DIR, mf->n ? strchr(mf->items[0].member, '/') + 1 : "", mf->path);
    else if (mf->packed)
        add(t, "   Into the asset cache, checked against %s:\n"
            "     NORMSWEEP_MANIFEST=%s normsweep assets fetch %s --mirror %s --copy\n",
            NS_ARCHIVE_ASSETS, NS_ARCHIVE_ASSETS, mf->used, NS_ARCHIVE_MODEL_DIR);
    else if (!mf->path)
        add(t, "   Each file goes into the asset cache ($NORMSWEEP_ASSETS, default\n"
            "   ~/.cache/normsweep/assets) under the name shown, or into a mirror directory\n"
            "   (NORMSWEEP_MIRROR) under the mirror path %s gives it; or\n"
            "     NORMSWEEP_MANIFEST=%s normsweep assets fetch %s\n"
            "   fetches it from the sources %s lists (where it lists any).\n", NS_ARCHIVE_ASSETS,
            NS_ARCHIVE_ASSETS, mf->used, NS_ARCHIVE_ASSETS);
}

/* REPRODUCE: the files the rerun needs, and the command, pinned to the model used. */
static void reproduce(text *t, const ns_nc_info *info, const char *launcher,
                      const char *nc_member, const ns_model_files *mf)
{
    char pin[256];
    ns_archive_model_pin(mf, pin, sizeof pin);
    add(t, "\nREPRODUCE\n"
        "1. Build normsweep %s (git %s) as its README says; `normsweep --version` tells.\n"
        "2. The inputs, each checked by its SHA-256 before use (INPUTS above):\n",
        attr(info, "normsweep_version"), attr(info, "git_commit"));
    model_needs(t, mf);
    add(t, "   tokenizer and corpus: NORMSWEEP_MANIFEST=%s normsweep assets fetch %s %s\n"
        "   (or a mirror directory holding them: NORMSWEEP_MIRROR).\n", NS_ARCHIVE_ASSETS,
        attr(info, "tokenizer_used"), attr(info, "corpus_used"));
    add(t, "3. Run, from the extracted directory:\n"
        "     %snormsweep run --model-pin %s %s \\\n"
        "       --output rerun/%s --checkpoint-dir rerun/checkpoint\n"
        "   --model-pin runs the model this run used (%s, this model.safetensors) and refuses\n"
        "   any other; any number of ranks gives the same data; `--resume` continues an\n"
        "   interrupted rerun.\n"
        "4. Compare the data of rerun/%s with the archived %s (e.g. ncdump of both).\n",
        launcher, pin, NS_ARCHIVE_SWEEP, nc_member, mf->used, nc_member, nc_member);
}

int ns_archive_readme(const ns_nc_info *info, const char *archive_name, const char *top,
                      const char *nc_member, const ns_readme_member *members, size_t n,
                      int format, const ns_model_files *mf, char **out, ns_err *err)
{
    if (format >= 3 && !mf)
        return ns_fail(err, NS_ERR_INVALID, "README: no model described");
    text t = {0};
    char launcher[1024];
    ns_archive_launcher(ns_nc_info_text(info, "command_line"), launcher, sizeof launcher);
    add(&t, "normsweep reproducibility archive %s\n\n", archive_name);
    add(&t, "WHAT THIS IS\n%s\n", attr(info, "title"));
    add(&t, "Run from %s to %s on %lld MPI rank(s):\n  %s\n", attr(info, "start_time"),
        attr(info, "end_time"), attr_int(info, "mpi_size"), attr(info, "command_line"));
    add(&t, "Run segments (history):\n  %s\n", attr(info, "history"));
    add(&t, "Note: %s\n\n", attr(info, "comment"));
    add(&t, "INPUTS (each checked by SHA-256 before use)\n");
    add(&t, "  model      %s (requested %s; fallback %s)\n             sha256 %s\n",
        attr(info, "model_used"), attr(info, "model_requested"), attr(info, "model_fallback"),
        attr(info, "model_sha256"));
    add(&t, "  tokenizer  %s  sha256 %s\n", attr(info, "tokenizer_used"),
        attr(info, "tokenizer_sha256"));
    add(&t, "  corpus     %s  sha256 %s (%lld tokens, Gutenberg header stripped: %s)\n\n",
        attr(info, "corpus_used"), attr(info, "corpus_sha256"), attr_int(info, "corpus_tokens"),
        attr(info, "corpus_gutenberg_stripped"));
    add(&t, "SOFTWARE\n  normsweep %s, git %s, METRICS version %lld\n  executable sha256 %s\n",
        attr(info, "normsweep_version"), attr(info, "git_commit"),
        attr_int(info, "metrics_version"), attr(info, "executable_sha256"));
    add(&t, "  compiler   %s\n  cflags     %s\n  MPI        %s\n  netCDF-C   %s\n  HDF5       %s\n"
        "  BLAS       %s\n  OS         %s\n\n", attr(info, "compiler"), attr(info, "cflags"),
        attr(info, "mpi_library"), attr(info, "netcdf_version"), attr(info, "hdf5_version"),
        attr(info, "blas"), attr(info, "os"));
    add(&t, "MEMBERS (under %s/)\n", top);
    for (size_t i = 0; i < n; i++)
        add(&t, "  %-34s %12llu bytes  %s\n", members[i].name, (unsigned long long)members[i].bytes,
            member_role(members[i].name, nc_member));
    add(&t, "  %-34s %12s        SHA-256 of every member above (sha256sum -c works)\n",
        "MANIFEST.sha256", "");
    int lean = format >= 3;
    for (size_t i = 0; i < n && lean; i++)
        lean = strncmp(members[i].name, NS_ARCHIVE_CKPT_DIR "/journal",
                       strlen(NS_ARCHIVE_CKPT_DIR "/journal")) != 0;
    if (lean)
        add(&t, "\nVERIFY\n  normsweep verify %s\n"
            "checks the manifest, the sweep text, the inputs' SHA-256, then -- this archive is lean:\n"
            "it holds no journal -- recomputes every task from the model and the whole reduction,\n"
            "and compares them with every variable of the NetCDF file (byte-identical with the same\n"
            "build, else within a stated tolerance; docs/ARCHIVE.md). By hand: cd %s && sha256sum\n"
            "-c MANIFEST.sha256\n", archive_name, top);
    else
        add(&t, "\nVERIFY\n  normsweep verify %s\n"
            "checks the manifest, the sweep text, the inputs' SHA-256, recomputes the whole reduction\n"
            "from the journal and compares it with every variable of the NetCDF file, then recomputes\n"
            "sampled tasks from the model (byte-identical with the same build, else within a stated\n"
            "tolerance; docs/ARCHIVE.md). By hand: cd %s && sha256sum -c MANIFEST.sha256\n",
            archive_name, top);
    if (format < 3)
        reproduce_v2(&t, info, launcher, nc_member);
    else
        reproduce(&t, info, launcher, nc_member, mf);
    if (t.oom || !t.s) {
        free(t.s);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory (README)");
    }
    *out = t.s;
    return NS_OK;
}
