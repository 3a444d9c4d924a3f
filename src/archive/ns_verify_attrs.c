/* ns_verify_attrs: the archived NetCDF's expected attributes (see ns_verify_attrs.h). */
#include "archive/ns_verify_attrs.h"

#include <stdio.h>
#include <string.h>

#include "analysis/ns_topn.h"
#include "archive/ns_archive_provenance.h"
#include "io/ns_nc_results.h"

/* The attributes verify takes from the file because nothing archived can recompute them, by why
 * (each group one INFO line). */
enum { G_SEGMENT, G_RUN, G_BUILD, G_PATH, G_COUNT };
static const char *const group_why[G_COUNT] = {
    "when, how, on how many ranks and by which version the run segment that wrote the file was "
    "launched; checked against checkpoint/history only",
    "when the run ended; the institution it named, NORMSWEEP_INSTITUTION",
    "the build, libraries and machine that ran the sweep; they choose the comparison mode",
    "paths on the machine that ran the sweep",
};
static const struct {
    const char *name;
    int group;
} unchecked[] = {
    {"history", G_SEGMENT}, {"start_time", G_SEGMENT}, {"command_line", G_SEGMENT},
    {"mpi_size", G_SEGMENT}, {"normsweep_version", G_SEGMENT}, {"git_commit", G_SEGMENT},
    {"end_time", G_RUN}, {"institution", G_RUN},
    {"executable_sha256", G_BUILD}, {"compiler", G_BUILD}, {"cflags", G_BUILD}, {"blas", G_BUILD},
    {"mpi_library", G_BUILD}, {"netcdf_version", G_BUILD}, {"hdf5_version", G_BUILD},
    {"os", G_BUILD},
    {"sweep_file", G_PATH}, {"model_path", G_PATH},
};

void ns_verify_expect_init(ns_verify_expect *e, const ns_nc_info *info,
                           const ns_sweep_config *cfg, const char *model_requested,
                           const ns_sweep_inputs *in, int model_fallback, const ns_plan *plan)
{
    memset(e, 0, sizeof *e);
    e->model = in->model_ref;
    e->model.is_fallback = model_fallback;
    const char *path = ns_nc_info_text(info, "model_path");
    snprintf(e->model.path, sizeof e->model.path, "%s", path ? path : "");
    e->build = (ns_provenance_build){
        ns_nc_info_text(info, "normsweep_version"), ns_nc_info_text(info, "git_commit"),
        ns_nc_info_text(info, "compiler"), ns_nc_info_text(info, "cflags"),
        ns_nc_info_text(info, "netcdf_version"), ns_nc_info_text(info, "hdf5_version"),
        ns_nc_info_text(info, "os")};
    long long ranks = -1;
    ns_nc_info_int(info, "mpi_size", &ranks);
    int all_softmax = 1;
    for (size_t i = 0; i < plan->g.nnormalizers; i++)
        all_softmax &= ns_topn_rank_is_T_free(&plan->g.normalizers[i]); /* no view */
    size_t nm = in->have_model ? ns_sweep_model_attrs(&in->model_cfg, e->model_attrs,
                                                      e->model_buf, sizeof e->model_buf) : 0;
    e->prov = (ns_provenance){
        .kind = "sweep",
        .model_attrs = e->model_attrs, .n_model_attrs = nm,
        .command_line = ns_nc_info_text(info, "command_line"),
        .history = ns_nc_info_text(info, "history"),
        .institution = ns_nc_info_text(info, "institution"),
        .start_time = ns_nc_info_text(info, "start_time"),
        .end_time = ns_nc_info_text(info, "end_time"),
        .model = &e->model, .tokenizer = &in->tokenizer_ref, .corpus = &in->corpus_ref,
        .model_requested = model_requested,
        .mpi_size = ranks,
        .mpi_library = ns_nc_info_text(info, "mpi_library"),
        .blas = ns_nc_info_text(info, "blas"),
        .executable_sha256 = ns_nc_info_text(info, "executable_sha256"),
        .sweep_file = ns_nc_info_text(info, "sweep_file"),
        .sweep_yaml = ns_nc_info_text(info, "sweep_yaml"),
        .strip_gutenberg = cfg->strip_gutenberg,
        .all_softmax_family = all_softmax,
        .build = &e->build,
    };
}

/* The 12-character form of a commit the history line carries ("-dirty" kept). */
static void git_short(const char *commit, char *buf, size_t size)
{
    size_t h = strspn(commit, "0123456789abcdef");
    if (h >= 12)
        snprintf(buf, size, "%.12s%s", commit, commit + h);
    else
        snprintf(buf, size, "%s", commit);
}

static size_t differs(ns_vreport *v, const char *name, const char *file, const char *history)
{
    if (file && strcmp(file, history) == 0)
        return 0;
    ns_vreport_line(v, "FAIL", "attributes: %s is \"%s\"; checkpoint/history gives \"%s\"", name,
                    file ? file : "(missing)", history);
    return 1;
}

size_t ns_verify_attrs_history(ns_vreport *v, const ns_nc_info *info, const char *history_member)
{
    const char *history = ns_nc_info_text(info, "history");
    size_t bad = 0;
    if (!history_member) {
        ns_vreport_line(v, "FAIL", "attributes: history cannot be checked: the archive holds no "
                        "checkpoint/history (every run segment appends its line there)");
        bad++;
    } else if (!history || strcmp(history, history_member) != 0) {
        ns_vreport_line(v, "FAIL", "attributes: history differs from checkpoint/history (the "
                        "NetCDF's holds %zu bytes, the member %zu)", history ? strlen(history) : 0,
                        strlen(history_member));
        bad++;
    }
    ns_history_line h;
    if (!ns_archive_history_last(history, &h)) {
        ns_vreport_line(v, "FAIL", "attributes: history has no line of a normsweep run segment");
        return bad + 1;
    }
    bad += differs(v, "start_time", ns_nc_info_text(info, "start_time"), h.time);
    bad += differs(v, "command_line", ns_nc_info_text(info, "command_line"), h.command);
    bad += differs(v, "normsweep_version", ns_nc_info_text(info, "normsweep_version"), h.version);
    char shortc[128];
    const char *commit = ns_nc_info_text(info, "git_commit");
    git_short(commit ? commit : "", shortc, sizeof shortc);
    bad += differs(v, "git_commit (its first 12 digits)", commit ? shortc : NULL, h.git);
    long long ranks = -1;
    if (!ns_nc_info_int(info, "mpi_size", &ranks) || ranks != h.ranks) {
        ns_vreport_line(v, "FAIL", "attributes: mpi_size is %lld; checkpoint/history gives %lld",
                        ranks, h.ranks);
        bad++;
    }
    return bad;
}

void ns_verify_attrs_unchecked(ns_vreport *v, int have_forward_count)
{
    for (int g = 0; g < G_COUNT; g++) {
        char list[512];
        size_t at = 0;
        list[0] = 0;
        for (size_t i = 0; i < sizeof unchecked / sizeof unchecked[0]; i++)
            if (unchecked[i].group == g && at < sizeof list)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "",
                                       unchecked[i].name);
        ns_vreport_line(v, "INFO", "not checked: %s (%s)", list, group_why[g]);
    }
    if (have_forward_count)
        ns_vreport_line(v, "INFO", "not checked: the values of shard_forward_count (the forward "
                        "passes run per shard, resumes included: the journal does not record "
                        "them)");
}

int ns_verify_attrs_layout(ns_vreport *v, const ns_nc_info *info, const char *ncname)
{
    long long layout = 1; /* no attribute: written before issue 34 */
    ns_nc_info_int(info, "output_layout", &layout);
    if (layout == NS_OUTPUT_LAYOUT)
        return 1;
    const char *ver = ns_nc_info_text(info, "normsweep_version");
    const char *git = ns_nc_info_text(info, "git_commit");
    ns_vreport_line(v, "FAIL", "numbers and attributes: %s is in output layout %lld, this "
                    "normsweep writes layout %d (docs/OUTPUT.md): verify it with the normsweep "
                    "that wrote it (version %s, git %s)", ncname, layout, NS_OUTPUT_LAYOUT,
                    ver ? ver : "unknown", git ? git : "unknown");
    return 0;
}

void ns_verify_attrs_diff(void *user, const ns_nc_check_item *it)
{
    ns_vreport *v = user;
    const char *give = "the sweep, its inputs and journal give";
    char name[600];
    snprintf(name, sizeof name, "%s%s%s", it->var ? it->var : "", it->var && it->attr ? ":" : "",
             it->attr ? it->attr : "");
    if (it->attr && it->kind == NS_NC_CHECK_DIFFERS)
        ns_vreport_line(v, "FAIL", "attributes: %s is %s; %s %s", name, it->have, give, it->want);
    else if (it->attr && it->kind == NS_NC_CHECK_MISSING)
        ns_vreport_line(v, "FAIL", "attributes: %s is missing (normsweep writes %s)", name,
                        it->want);
    else if (it->attr)
        ns_vreport_line(v, "FAIL", "attributes: %s = %s is not an attribute normsweep writes",
                        name, it->have);
    else if (it->kind == NS_NC_CHECK_EXTRA)
        ns_vreport_line(v, "FAIL", "attributes: %s %s is not one normsweep writes", it->what,
                        it->have);
    else if (it->kind == NS_NC_CHECK_MISSING)
        ns_vreport_line(v, "FAIL", "attributes: %s %s is missing", it->what, it->want);
    else
        ns_vreport_line(v, "FAIL", "attributes: %s %s has %s; %s %s", it->what, it->var,
                        it->have, give, it->want);
}
