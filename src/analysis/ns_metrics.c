/* ns_metrics: the metric table and the row-record layout (see ns_metrics.h). */
#include "analysis/ns_metrics.h"

#include <math.h>
#include <stdint.h>

static const ns_metric_info ns_metric_table[NS_M_COUNT] = {
    [NS_M_DISTANCE] = {"distance", NS_DIMS_TN,
        "Theorem 1 distance d = sum over keys outside the top N of ||alpha_i x_i - s||", "1",
        "how far the weighted vectors left out of the top-N selection lie from the selected "
        "mixture s; METRICS.md section 4"},
    [NS_M_DISTANCE_D1] = {"distance_d1", NS_DIMS_TN,
        "Theorem 1 d1: largest distance between a key outside the top N and one inside", "1",
        "the diameter term of Theorem 1's bound; METRICS.md section 4"},
    [NS_M_DISTANCE_BOUND] = {"distance_bound", NS_DIMS_TN,
        "Theorem 1 upper bound on d", "1",
        "(1 - abar_N) d1 + max_j ||x_j||^2 (abar_N (L - N) - (1 - abar_N)); METRICS.md section 4"},
    [NS_M_DISTANCE_EXPECTED] = {"distance_expected", NS_DIMS_TN,
        "Theorem 1 closed-form expectation term (epsilon taken as 0; not a random-subset mean)",
        "1",
        "(L - N)/L sum_i ||(alpha_i + N/(L-1)) x_i - xbar||^2, the paper's closed form evaluated "
        "on the row; the reference of the paper's KS test; METRICS.md sections 4 and 5"},
    [NS_M_DISTANCE_RANDOM] = {"distance_random", NS_DIMS_TN,
        "Theorem 1 distance d for a uniformly random N-subset of the keys", "1",
        "d with the top-N set replaced by a random N-subset (nested: the first N keys of one "
        "random permutation); the reference of the stricter KS test; METRICS.md sections 4, 5"},
    [NS_M_NS_FRAC] = {"ns_frac", NS_DIMS_TN,
        "Theorem 2 fraction N_s / N of the top N inside radius r of the mixture", "1",
        "N_s counts i in the top N with ||alpha_i x_i - s|| <= r, compared without cancellation; "
        "METRICS.md section 6"},
    [NS_M_NS_LOWER] = {"ns_lower", NS_DIMS_TN,
        "Theorem 2 lower bound on N_s / N", "1",
        "1 - sum_i xi_i / (r N); vacuous when <= 0, missing when r = 0; METRICS.md section 6"},
    [NS_M_NS_UPPER] = {"ns_upper", NS_DIMS_TN,
        "Theorem 2 upper bound on N_s / N", "1",
        "(1/N) sum_i exp(-(r - xi_i)^2 / (16 M^2)); at least exp(-1/16) on the unit sphere; "
        "METRICS.md section 6"},
    [NS_M_DELTA] = {"delta", NS_DIMS_ROW,
        "Theorem 2 delta: smallest distance between two vectors of the row", "1",
        "min over pairs i != j of ||x_i - x_j||; METRICS.md section 6"},
    [NS_M_JAC_EXACT] = {"jac_exact", NS_DIMS_T,
        "exact spectral norm of the normalizer Jacobian dF(z/T)/dz", "1",
        "largest singular value of the Jacobian of alpha = F(z/T) with respect to z; for "
        "softmax it reaches 1/(2T); METRICS.md section 7"},
    [NS_M_JAC_LEMMA2] = {"jac_lemma2", NS_DIMS_T,
        "Lemma 2 general bound on the Jacobian norm for F(z) = exp(z/T)", "1",
        "||F'|| / (L min F) + ||F|| ||F'|| / (L^2 min F^2), +inf beyond the double range; "
        "softmax and ssmax only; METRICS.md section 7"},
    [NS_M_ENTROPY] = {"entropy", NS_DIMS_T,
        "attention entropy -sum_i alpha_i log alpha_i", "1",
        "in nats (natural logarithm; units \"1\": UDUNITS reads \"nat\" as nano technical "
        "atmospheres); spread of the attention weights (0 log 0 = 0); METRICS.md section 8"},
    [NS_M_ENTROPY_NORM] = {"entropy_norm", NS_DIMS_T,
        "attention entropy divided by log L", "1",
        "1 for uniform attention over the L keys, 0 for one-hot; METRICS.md section 8"},
    [NS_M_N_EFF] = {"n_eff", NS_DIMS_T,
        "effective number of attended keys exp(entropy)", "1",
        "METRICS.md section 8"},
    [NS_M_JAC_FD] = {"jac_fd", NS_DIMS_TE,
        "finite-difference sensitivity max_u ||F((z + eps u)/T) - F(z/T)|| / eps", "1",
        "over the probe set (e_a - e_b)/sqrt 2 and `probes` random unit directions; a secant, "
        "not a derivative, when eps/T is large; METRICS.md section 7"},
    [NS_M_MASS] = {"mass", NS_DIMS_T,
        "row mass m = sum_j a_j of the normalizer's weights", "1",
        "1 by definition for softmax, ssmax, sparsemax, entmax15 and entmax (not the rounded sum); "
        "the sum in key order for softmax1, sigmoid, softpick, relu and stickbreaking; 0 for an "
        "empty row (every a_j = 0), whose shape metrics are missing and which is counted in "
        "empty_rows; METRICS.md section 2.1"},
    [NS_M_SINK_MASS] = {"sink_mass", NS_DIMS_T,
        "share of the row's mass on the window's first key p_0 = a_0 / m", "1",
        "the weight on key 0 of p = a / m (a_0 itself on the simplex), so that it compares across "
        "normalizers; missing for an empty row; sink_heads_frac thresholds its per-head mean at "
        "0.3; METRICS.md section 8.1"},
};

const ns_metric_info *ns_metric_info_of(ns_metric_id id)
{
    return (unsigned)id < NS_M_COUNT ? &ns_metric_table[id] : NULL;
}

void ns_row_layout_init(ns_row_layout *lay, size_t nT, size_t nN, size_t neps, int t_free_rank)
{
    lay->nT = nT;
    lay->nN = nN;
    lay->neps = neps;
    lay->t_free_rank = t_free_rank;
    size_t off = 0;
    for (int id = 0; id < NS_M_COUNT; id++) {
        size_t size = 0;
        switch (ns_metric_table[id].dims) {
        case NS_DIMS_TN: size = (id == NS_M_DISTANCE_D1 && t_free_rank) ? nN : nT * nN; break;
        case NS_DIMS_T: size = nT; break;
        case NS_DIMS_TE: size = nT * neps; break;
        case NS_DIMS_ROW: size = 1; break;
        }
        if (id == NS_M_N_EFF) {
            lay->offset[id] = SIZE_MAX; /* derived from entropy */
            continue;
        }
        lay->offset[id] = off;
        off += size;
    }
    lay->total = off;
}

size_t ns_row_index(const ns_row_layout *lay, ns_metric_id id, size_t t, size_t n, size_t e)
{
    switch (ns_metric_table[id].dims) {
    case NS_DIMS_TN:
        if (id == NS_M_DISTANCE_D1 && lay->t_free_rank)
            return lay->offset[id] + n;
        return lay->offset[id] + t * lay->nN + n;
    case NS_DIMS_T: return lay->offset[id] + t;
    case NS_DIMS_TE: return lay->offset[id] + t * lay->neps + e;
    case NS_DIMS_ROW: break;
    }
    return lay->offset[id];
}

double ns_row_value(const ns_row_layout *lay, const double *row, size_t L, ns_metric_id id,
                    size_t t, size_t n, size_t e)
{
    (void)L;
    if (id == NS_M_N_EFF)
        return exp(row[ns_row_index(lay, NS_M_ENTROPY, t, 0, 0)]);
    if (ns_metric_table[id].dims == NS_DIMS_TN && n >= lay->nN)
        return NAN;
    return row[ns_row_index(lay, id, t, n, e)];
}

double ns_jac_bound(double T)
{
    double b = 1.0 / (4.0 * T);
    return b < M_SQRT2 ? b : M_SQRT2;
}

int ns_exceeds(double value, double bound, double rel)
{
    if (isnan(value) || isnan(bound))
        return 0;
    if (isinf(bound))
        return 0; /* nothing exceeds +inf; value = +inf against a finite bound does */
    return value > bound + rel * fabs(bound);
}
