/* ns_nc_intervals: the intervals' variables and attributes (see ns_nc_intervals.h). */
#include "io/ns_nc_intervals.h"

#include <stdio.h>
#include <string.h>

#include "analysis/ns_boot.h"

static const char *const dims_of[] = {
    [NS_CI_LTN] = "normalizer,L,T,N,head_set", [NS_CI_LT] = "normalizer,L,T,head_set",
    [NS_CI_TN] = "normalizer,T,N,head_set", [NS_CI_L] = "normalizer,L,head_set",
};

static void attr_add(ns_nc_var *v, ns_nc_attr a)
{
    if (v->nattrs < NS_NC_MAX_ATTRS)
        v->attrs[v->nattrs++] = a;
}

/* v's dimension list from a comma-separated text (kept in buf). */
static void set_dims(ns_nc_var *v, char *buf)
{
    v->ndims = 0;
    for (char *tok = strtok(buf, ","); tok && v->ndims < NS_NC_MAX_DIMS; tok = strtok(NULL, ","))
        v->dims[v->ndims++] = tok;
}

static void one_stat(const ns_intervals *iv, ns_ci_id id, ns_nc_intervals *o)
{
    const ns_ci_info *ci = ns_ci_info_of(id);
    static const char *const suffix[3] = {"", "_ci_low", "_ci_high"};
    static const char *const end[3] = {"", "lower", "upper"};
    const double *data[3] = {iv->est[id], iv->lo[id], iv->hi[id]};
    size_t lo_r = 0, hi_r = 0;
    ns_err e;
    if (ns_boot_ranks(iv->B, &lo_r, &hi_r, &e) != NS_OK)
        lo_r = hi_r = 0;
    for (int k = 0; k < 3; k++) {
        size_t i = o->nvars++;
        ns_nc_var *v = &o->vars[i];
        char (*t)[192] = o->text[i];
        memset(v, 0, sizeof *v);
        snprintf(t[0], sizeof t[0], "%s%s", ci->name, suffix[k]);
        snprintf(t[1], sizeof t[1], "%s", dims_of[ci->dims]);
        v->name = t[0];
        v->type = NS_NC_DOUBLE;
        v->data = data[k];
        set_dims(v, t[1]);
        ns_nc_var_text(v, "units", "1");
        ns_nc_var_text(v, "coordinates", "head_set_name");
        if (k == 0) {
            snprintf(t[2], sizeof t[2], "%s_ci_low %s_ci_high", ci->name, ci->name);
            snprintf(t[3], sizeof t[3], "percentile, shard bootstrap: order statistics %zu and "
                     "%zu of %zu resamples", lo_r + 1, hi_r + 1, iv->B);
            ns_nc_var_text(v, "long_name", ci->meaning);
            ns_nc_var_text(v, "ancillary_variables", t[2]);
            attr_add(v, (ns_nc_attr){.name = "bootstrap_resamples", .ival = (long long)iv->B});
            attr_add(v, (ns_nc_attr){.name = "confidence_level", .dval = NS_BOOT_LEVEL,
                                     .is_double = 1});
            ns_nc_var_text(v, "interval_method", t[3]);
        } else {
            snprintf(t[2], sizeof t[2], "%s end of %s", end[k], ci->name);
            snprintf(t[3], sizeof t[3], "%s end of the 95 %% percentile interval of the shard "
                     "bootstrap (docs/STATISTICS.md, \"Uncertainty: the shard bootstrap\")",
                     end[k]);
            ns_nc_var_text(v, "long_name", t[2]);
            ns_nc_var_text(v, "comment", t[3]);
        }
    }
}

void ns_nc_intervals_describe(const ns_intervals *iv, ns_nc_intervals *o)
{
    memset(o, 0, sizeof *o);
    o->dims[0] = (ns_nc_dim){"head_set", iv->nsets};
    o->dims[1] = (ns_nc_dim){"head_set_strlen", NS_CI_SET_STRLEN};
    ns_nc_var *v = &o->vars[o->nvars++];
    snprintf(o->text[0][1], sizeof o->text[0][1], "head_set,head_set_strlen");
    *v = (ns_nc_var){.name = "head_set_name", .type = NS_NC_CHAR, .data = iv->set_name};
    set_dims(v, o->text[0][1]);
    ns_nc_var_text(v, "long_name", "the heads a statistic is aggregated over");
    snprintf(o->text[0][2], sizeof o->text[0][2], "all: every head; sharp / flat: the heads whose "
             "mean entropy_norm at the cell's L and T is below / at least %g; layer k: the heads "
             "of layer k", NS_CI_SHARP_BELOW);
    ns_nc_var_text(v, "comment", o->text[0][2]);
    size_t used = 0;
    for (int id = 0; id < NS_CI_COUNT; id++) {
        one_stat(iv, (ns_ci_id)id, o);
        int n = snprintf(o->stats + used, sizeof o->stats - used, "%s%s", id ? " " : "",
                         ns_ci_info_of((ns_ci_id)id)->name);
        used += n > 0 && (size_t)n < sizeof o->stats - used ? (size_t)n : 0;
    }
    used = 0;
    for (size_t k = 0; k < iv->n_ci_T; k++) {
        int n = snprintf(o->temps + used, sizeof o->temps - used, "%s%.17g", k ? " " : "",
                         iv->ci_T[k]);
        used += n > 0 && (size_t)n < sizeof o->temps - used ? (size_t)n : 0;
    }
    snprintf(o->rule, sizeof o->rule, "shard (block) bootstrap, docs/STATISTICS.md \"Uncertainty: "
             "the shard bootstrap\": resample b draws shard_count shards with replacement from "
             "ns_rng keyed (0x626f6f7473747270 \"bootstrp\", seed, b); 95 %% percentile intervals; "
             "entropy_norm_mean_hmedian, jac_exact_max_hmax and jac_exact_T_slope have them at "
             "every T, every other statistic only at the claims' temperatures "
             "(bootstrap_interval_T: the grid's T nearest 1 and its neighbours), its estimate "
             "alone (NaN ends) at the others");
    o->attrs[0] = (ns_nc_attr){.name = "bootstrap_rule", .text = o->rule};
    o->attrs[1] = (ns_nc_attr){.name = "bootstrap_resamples", .ival = (long long)iv->B};
    o->attrs[2] = (ns_nc_attr){.name = "bootstrap_statistics", .text = o->stats};
    o->attrs[3] = (ns_nc_attr){.name = "bootstrap_interval_T", .text = o->temps};
}
