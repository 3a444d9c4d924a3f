/* ns_provenance: global attributes of normsweep's files (see ns_provenance.h). */
#include "config.h"

#include "io/ns_provenance.h"

#include <netcdf.h>
#include <stdio.h>
#include <string.h>
#if defined(__has_include)
#if __has_include(<H5public.h>)
#include <H5public.h> /* the HDF5 headers netCDF-C was built against (netcdf.pc's -I) */
#endif
#endif

#include "common/ns_build.h"
#include "common/ns_sys.h"

/* The decisions METRICS.md (version 2) leaves to the implementation, as written into every file
 * (docs/METRICS.md repeats them with their reasons). */
static const char *const ns_rules[][2] = {
    {"metrics_contract", "docs/METRICS.md of normsweep (METRICS version 2): the definition of "
                         "every variable"},
    {"tie_rule", "top-N ties broken by the smaller key index"},
    {"row_rule", "row r of context length L is prefix row m = L - 1 - r (r < rows), with m + 1 "
                 "keys; the forward pass over a shard's first max(L) tokens serves every L "
                 "(prefix property)"},
    {"vectors", "x_i = the head's value vectors v_i; sphere: true scales each to norm M = 1, "
                "false uses them raw with M = max_i ||x_i|| over the row"},
    {"precision", "logits and values float32 from the model; weights and every metric in double"},
    {"skipped_rule", "a row with N >= its number of keys is skipped at that N (its Theorem 1 and 2 "
                     "values are missing) and counted in skipped_rows"},
    {"missing_rule", "NaN = missing (skipped rows; ns_lower when r = 0; jac_lemma2 for sparsemax "
                     "and entmax15; entropy_norm when L = 1), excluded from every statistic, count "
                     "and KS test; +inf is a value (Lemma 2 beyond the double range)"},
    {"one_minus_abar_rule", "1 - abar_N in distance_bound is the sum of the weights outside the "
                            "top N (no cancellation near 1)"},
    {"expected_term_rule", "distance_expected is Theorem 1's closed form with the paper's epsilon "
                           "term taken as 0, evaluated on the row; it is not a random-subset mean"},
    {"random_selection", "nested: the random subset for N is the first N keys of one uniformly "
                         "random permutation keyed by (seed, shard, row, layer, head, T) "
                         "(counter-based generator), so each N's subset is uniform"},
    {"ns_rule", "N_s counts i in the top N with e_i <= min over j outside it of e_j, "
                "e_i = alpha_i (alpha_i ||x_i||^2 - 2 x_i . s) = ||alpha_i x_i - s||^2 - ||s||^2, "
                "compared as signed logarithms (no cancellation, no underflow of alpha)"},
    {"xi_rule", "xi_i^2 = M^2 sum_{j in I_N, j != i} alpha_j^2 + (M^2 - delta^2/2) "
                "sum_{j != k in I_N; j, k != i} alpha_j alpha_k, clamped at 0 (both j and k exclude "
                "i; the paper's slide excludes only j = i)"},
    {"ns_lower_rule", "ns_lower is missing when r = 0 (counted in ns_lower_undefined); vacuous when "
                      "<= 0 (ns_lower_vacuous); ns_upper vacuous when >= 1 - 1e-12"},
    {"jac_rule", "jac_exact is the normalizer's own exact Jacobian norm (softmax and ssmax by the "
                 "secular equation of diag(alpha) - alpha alpha^T); jac_lemma2 reads ||F'||_2 as "
                 "the Euclidean norm of the derivative vector and is evaluated with the row maximum "
                 "subtracted"},
    {"fd_probes", "jac_fd maximizes over u = (e_a - e_b)/sqrt(2) (a, b the two largest logits, "
                  "ties by index) and `probes` random unit directions keyed by (seed, shard, row, "
                  "layer, head): the same directions for every T and eps of a row; at small T and "
                  "large eps it is a secant, not a derivative"},
    {"violation_rules", "thm1: d > d_bound + 1e-9 |d_bound|; ns_upper: ns_frac > ns_upper; "
                        "ns_lower: ns_frac < ns_lower; jac_exact, jac_fd: value > jac_bound + "
                        "1e-6 jac_bound with jac_bound = min(1/(4T), sqrt 2); lemma2: jac_exact > "
                        "jac_lemma2 + 1e-6 jac_lemma2; thm1 and ns_* per (L, T, N) cell over the rows "
                        "analysed at that N, jac_exact and lemma2 per (L, T), jac_fd per (L, T, eps) "
                        "over every row where the value is defined (each row once: no N), each with "
                        "its *_checked count"},
    {"ks_method", "two-sample Kolmogorov-Smirnov test as scipy.stats.ks_2samp(method='auto'), "
                  "two-sided, NaN rows dropped: ks_expected tests distance against "
                  "distance_expected (the paper's test), ks_random against distance_random"},
    {"n_crit_rule", "smallest N of the grid whose p-value exceeds ks_alpha; the fill value "
                    "when none is found, n_crit_*_status saying why: 0 found, 1 "
                    "none_of_the_grid_N_passes, 2 not_computable (every N skipped)"},
    {"quantile_method", "exact over the gathered sample, linear interpolation (numpy "
                        "method='linear'), quantile 0 the minimum and 1 the maximum; population "
                        "standard deviation (ddof = 0)"},
    {"merge_rule", "per-row values combined by shard index, then row, independent of MPI ranks "
                   "and scheduling"},
    {"entropy_rule", "entropy = -sum alpha_i log alpha_i in nats with the exact log-weights "
                     "(0 log 0 = 0); entropy_norm = entropy / log L; n_eff = exp(entropy)"},
    {"mass_rule", "mass m = sum_j a_j of the normalizer's own weights a: 1 by definition on the "
                  "simplex (softmax, ssmax, sparsemax, entmax15, entmax), the sum in key order "
                  "for softmax1, sigmoid, softpick, relu, stickbreaking; a row with m = 0 "
                  "(log m = -inf: every a_j = 0) is empty: its shape metrics are missing and it is "
                  "counted in empty_rows (not in skipped_rows)"},
    {"shape_rule", "Theorem 1 and 2, both KS tests, entropy and N_s/N use p = a / m (from log a - "
                   "log m where m under- or overflows double, so a row whose m rounds to 0 with "
                   "log m finite is analysed); p = a on the simplex, bit for bit; off the simplex "
                   "the top N is ranked by log p (ties by index); jac_exact and jac_fd are of a "
                   "(d a / d z): jac_exact exact for softmax1, sigmoid, relu, entmax, missing for "
                   "softpick and stickbreaking (jac_fd measures them)"},
    {"sigmoid_bias_rule", "sigmoid(z_j / T + b): b as given, or by default b = -log(L) with L the "
                          "row's own number of keys (Ramapuram et al., Theory, Analysis, and Best "
                          "Practices for Sigmoid Self-Attention, ICLR 2025, arXiv 2409.04431: "
                          "b = -log n, n the sequence length)"},
    {"stickbreaking_rule", "stick-breaking's weights depend on key order, so a random subset of "
                           "keys is no exchangeable reference: distance_random and the KS test "
                           "against it (ks_random_*, n_crit_random) are missing for it"},
    {"sink_rule", "sink_mass = p_0 = a_0 / m, the share of the row's mass on the window's first "
                  "key (a_0 on the simplex), missing for an empty row; sink_heads_frac = the "
                  "fraction of a layer's heads whose mean sink_mass exceeds 0.3 (Gu et al., When "
                  "Attention Sink Emerges in Language Models: An Empirical View, ICLR 2025, arXiv "
                  "2410.10781, epsilon = 0.3)"},
};

size_t ns_provenance_attrs(const ns_provenance *p, ns_nc_attr *a, size_t cap, char *buf,
                           size_t size)
{
#define U(s) ((s) && *(s) ? (s) : "unknown")
#define PUT_TEXT(n, t)                                         \
    do {                                                       \
        if (k < cap)                                           \
            a[k++] = (ns_nc_attr){.name = (n), .text = U(t)}; \
    } while (0)
    size_t k = 0, used = 0;
    const ns_asset_ref *m = p->model, *tk = p->tokenizer, *co = p->corpus;
    char *os = buf + used;
    ns_sys_os(os, size - used);
    used += strlen(os) + 1;
#ifdef H5_VERS_INFO
    const char *hdf5 = H5_VERS_INFO " (headers of the build)";
#else
    const char *hdf5 = "unknown (no HDF5 headers at build time)";
#endif
    const ns_provenance_build here = {PACKAGE_VERSION, ns_build_git_commit(), NS_BUILD_CC,
                                      NS_BUILD_CFLAGS, nc_inq_libvers(), hdf5, os};
    const ns_provenance_build *b = p->build ? p->build : &here;
    /* the model as a reader calls it: a set's name, or a directory's base name (never "path") */
    char *mlabel = buf + used;
    const char *mname = m ? ns_asset_ref_label(m, mlabel, size - used) : NULL;
    used += m && mname == mlabel ? strlen(mlabel) + 1 : 0;
    char *title = buf + used;
    used += (size_t)snprintf(title, size - used,
                             "normsweep %s: limitations of normalization in attention "
                             "(arXiv 2508.17821) on %s", U(p->kind), m ? mname : "unknown model") + 1;
    char *source = buf + used;
    used += (size_t)snprintf(source, size - used, "normsweep %s (git %s), METRICS version %d; "
                             "model %s (sha256 %.16s...)", U(b->normsweep_version),
                             U(b->git_commit), NS_METRICS_VERSION, m ? mname : "unknown",
                             m ? m->sha256 : "unknown") + 1;
    char *comment = buf + used;
    if (m && m->is_fallback)
        snprintf(comment, size - used, "CAVEAT: the model requested (%s) was not available; these "
                 "results are for %s and are not comparable to %s's", p->model_requested,
                 mname, p->model_requested);
    else if (p->training)
        snprintf(comment, size - used, "a training log: every variable is described in "
                 "docs/TRAIN.md (attn_jac is METRICS.md section 7's jac_exact, version %d)",
                 NS_METRICS_VERSION);
    else
        snprintf(comment, size - used, "every variable is defined in docs/METRICS.md (version %d)",
                 NS_METRICS_VERSION);
    used += strlen(comment) + 1;
    PUT_TEXT("Conventions", "CF-1.8");
    PUT_TEXT("title", title);
    PUT_TEXT("institution", p->institution);
    PUT_TEXT("source", source);
    PUT_TEXT("history", p->history);
    PUT_TEXT("references", "Mudarisov, Burtsev, Petrova, State: Limitations of Normalization in "
                           "Attention Mechanism, arXiv:2508.17821 (2025)");
    PUT_TEXT("comment", comment);
    if (k < cap)
        a[k++] = (ns_nc_attr){.name = "metrics_version", .ival = NS_METRICS_VERSION, .is_int32 = 1};
    PUT_TEXT("normsweep_version", b->normsweep_version);
    PUT_TEXT("git_commit", b->git_commit);
    PUT_TEXT("compiler", b->compiler);
    PUT_TEXT("cflags", b->cflags);
    PUT_TEXT("blas", p->blas);
    PUT_TEXT("executable_sha256", p->executable_sha256);
    PUT_TEXT("mpi_library", p->mpi_library);
    PUT_TEXT("netcdf_version", b->netcdf_version);
    PUT_TEXT("hdf5_version", b->hdf5_version);
    PUT_TEXT("os", b->os);
    if (k < cap)
        a[k++] = (ns_nc_attr){.name = "mpi_size", .ival = p->mpi_size};
    PUT_TEXT("command_line", p->command_line);
    PUT_TEXT("start_time", p->start_time);
    PUT_TEXT("end_time", p->end_time);
    if (!p->training) {
        PUT_TEXT("sweep_file", p->sweep_file);
        PUT_TEXT("sweep_yaml", p->sweep_yaml);
    }
    PUT_TEXT("model_requested", p->model_requested);
    PUT_TEXT("model_used", m ? mname : NULL);
    PUT_TEXT("model_given_as", m ? (ns_asset_ref_is_path(m) ? "path" : "asset") : NULL);
    PUT_TEXT("model_fallback", m ? (m->is_fallback ? "true" : "false") : NULL);
    PUT_TEXT("model_path", m ? m->path : NULL);
    PUT_TEXT("model_sha256", m ? m->sha256 : NULL);
    for (size_t i = 0; i < p->n_model_attrs && k < cap; i++)
        a[k++] = p->model_attrs[i];
    PUT_TEXT("tokenizer_used", tk ? tk->name : NULL);
    PUT_TEXT("tokenizer_sha256", tk ? tk->sha256 : NULL);
    PUT_TEXT("corpus_used", co ? co->name : NULL);
    PUT_TEXT("corpus_sha256", co ? co->sha256 : NULL);
    PUT_TEXT("corpus_gutenberg_stripped", p->strip_gutenberg ? "true" : "false");
    if (p->training)
        return k;
    for (size_t r = 0; r < sizeof ns_rules / sizeof ns_rules[0]; r++)
        PUT_TEXT(ns_rules[r][0], ns_rules[r][1]);
    PUT_TEXT("ranking_rule",
             p->all_softmax_family
                 ? "I_N = the N keys of largest alpha_i = F(z/T), ranked by the exact log-weight "
                   "c z_i (c = 1/T, or s log(L)/T for ssmax): the order of alpha wherever alpha is "
                   "representable, unaffected by underflow at small T, and the same for every T"
                 : "softmax, ssmax: ranked by the exact log-weight c z_i (the same for every T); "
                   "sparsemax, entmax15: ranked by alpha itself (weights outside the support are 0 "
                   "and tie, so they follow by index)");
    return k;
#undef PUT_TEXT
#undef U
}
