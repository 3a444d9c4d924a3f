/* ns_plan: what one forward pass must deliver and where every value goes: the analysis grid
 * (grid/ns_grid.h: normalizers, context lengths L, rows, N, T, eps, layers, heads), its checks,
 * and the layout of a task's payload -- for each (layer, head, normalizer, L) a block of `rows`
 * row records (analysis/ns_metrics.h), row r of context length L being prefix row m = L - 1 - r.
 *
 * Every check of the grid lives here once: the sweep's validation reports them with the file's
 * line and column, `dump` with its option names, and ns_plan_init relies on them. */
#ifndef NS_PLAN_H
#define NS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_reduce.h"
#include "analysis/ns_row.h"
#include "common/ns_error.h"
#include "common/ns_range.h"
#include "grid/ns_grid.h"
#include "grid/ns_grid_derive.h"
#include "model/ns_model.h"

/* Entries of the normalizer axis: a sweep lists at most 16 normalizers
 * (NS_SWEEP_MAX_LISTED_NORMALIZERS), and `sink_view: true` adds each one's sink-excluded view. */
#define NS_PLAN_MAX_NORMALIZERS 32

/* ---- checks ------------------------------------------------------------------------------ */

/* The range of every single value of the grid (common/ns_range.h), declared once here and used
 * by the sweep file's keys (grid.L, shards.L_max, grid.N, grid.T, grid.eps, grid.layers,
 * grid.heads, rows, normalizer.s, probes) and by dump's options (--length, --N, --T, --eps, --s,
 * --probes): T and eps finite and in [NS_PLAN_MIN_SCALE, NS_PLAN_MAX_SCALE] (z / T and eps u / T
 * stay finite for any float logit), ssmax's s likewise (it scales the logits as 1 / T does), N
 * what the output's 32-bit integer holds, L, L_max and rows at most the longest context a model
 * can have, layers and heads below the most a model can have, probes <= NS_PLAN_MAX_PROBES. */
#define NS_PLAN_MIN_SCALE 1e-100
#define NS_PLAN_MAX_SCALE 1e100
#define NS_PLAN_MAX_PROBES 4096u
extern const ns_range ns_plan_range_L;      /* L, L_max, dump's --length */
extern const ns_range ns_plan_range_rows;
extern const ns_range ns_plan_range_N;
extern const ns_range ns_plan_range_scale;  /* T, eps */
extern const ns_range ns_plan_range_s;
extern const ns_range ns_plan_range_alpha; /* entmax's alpha: (1, 1000] */
extern const ns_range ns_plan_range_b;     /* sigmoid's bias: [-1000, 1000] */
extern const ns_range ns_plan_range_layer;
extern const ns_range ns_plan_range_head;
extern const ns_range ns_plan_range_probes;

/* Where a problem of the grid lies, for the caller's message. */
typedef enum ns_plan_where {
    NS_PLAN_AT_L = 0,    /* index: the L */
    NS_PLAN_AT_ROWS,
    NS_PLAN_AT_L_MAX,
    NS_PLAN_AT_LAYER,    /* index: the layer */
    NS_PLAN_AT_HEAD,     /* index: the head */
    NS_PLAN_AT_GRID      /* the grid as a whole (its size) */
} ns_plan_where;

/* Receives each problem found (text without the location); returns NS_OK or NS_ERR_NOMEM. */
typedef int (*ns_plan_report_fn)(void *user, ns_plan_where where, size_t index, const char *text);

/* The grid on its own: every L <= L_max, rows <= the smallest L. */
int ns_plan_check(const ns_grid *g, ns_plan_report_fn report, void *user, ns_err *err);
/* Against a model: L_max <= n_ctx and, for a model with a sliding window, <= the window; layers
 * < n_layer, heads < n_head (query heads; model_desc names the model). */
int ns_plan_check_model(const ns_grid *g, const ns_model_config *mc, const char *model_desc,
                        ns_plan_report_fn report, void *user, ns_err *err);

/* ---- memory ------------------------------------------------------------------------------ */

/* What a sweep of n_shards shards of this grid needs, in bytes per process (computed in double:
 * an absurd grid gives huge numbers, never wrapped ones). */
typedef struct ns_plan_memory {
    double payload;   /* one task's results */
    double task;      /* computing a task: forward workspace (with the analysed rows' logits)
                         + analysis scratch (one per normalizer) + the payload and the master's
                         receive buffer */
    double reduce;    /* rank 0 reducing: every cell's result twice (gathered and laid out for
                         NetCDF), one slice's rows, the samples when keep_samples, and the
                         bootstrap's per-shard values (boot) when they are computed */
    double boot;      /* the bootstrap's per-shard values one rank holds when the run has one
                         rank (analysis/ns_boot_shard.h: (14 nT nN + 3 nT + 3 nT nN rows) x shards
                         doubles per slice, and two rounds of reduced blocks in transit); with P
                         ranks each holds at most its share of the groups, ns_plan_boot_rank_bytes */
    int boot_capped;  /* boot exceeds NS_BOOT_SHARD_MAX_BYTES: a run on one rank writes no
                         intervals (and holds none of it: boot is not in reduce) */
    size_t boot_min_ranks; /* the fewest ranks whose largest holds at most NS_BOOT_SHARD_MAX_BYTES:
                              runs on that many ranks or more write intervals (0: none does) */
} ns_plan_memory;
void ns_plan_memory_estimate(const ns_grid *g, const ns_model_config *mc, size_t n_shards,
                             int keep_samples, ns_plan_memory *m);
/* The bootstrap's bytes on the largest of P ranks, every rank reducing, under the limit cap (<= 0:
 * the default; it sizes the rounds): ns_boot_shard_rank_bytes for the grid. */
double ns_plan_boot_rank_bytes(const ns_grid *g, size_t n_shards, size_t P, double cap);
/* The fewest ranks for which that is at most cap bytes (0: no rank count). */
size_t ns_plan_boot_min_ranks(const ns_grid *g, size_t n_shards, double cap);

/* What one task computes, in floating-point operations (for time estimates; computed in double). */
typedef struct ns_plan_work {
    double forward_flops; /* the forward pass's matrix products over the largest L, through the
                             deepest layer analysed (ns_model_forward_flops) */
    double gram_flops;    /* the analysis's Gram matrices: L^2 d per analysed (layer, head,
                             normalizer), the part of the analysis that grows as L^2 */
} ns_plan_work;
void ns_plan_work_estimate(const ns_grid *g, const ns_model_config *mc, ns_plan_work *w);

/* One task's results travel in one MPI message: at most this many doubles (16 GiB). */
#define NS_PLAN_MAX_PAYLOAD 2147483600.0
/* Refuse (reported at NS_PLAN_AT_GRID) a payload above NS_PLAN_MAX_PAYLOAD and, when
 * mem_limit > 0, a grid whose task or reduction needs more than mem_limit bytes per process. */
int ns_plan_check_memory(const ns_grid *g, const ns_model_config *mc, size_t n_shards,
                         int keep_samples, double mem_limit, ns_plan_report_fn report, void *user,
                         ns_err *err);

/* ---- the plan ---------------------------------------------------------------------------- */

typedef struct ns_plan {
    ns_grid g;             /* points into the plan's own copies */
    ns_grid_derived derived; /* what follows from g, computed once: the Jacobian bound per T,
                                the forward length L_fwd (the largest L), the slices */
    size_t n_layers_run;   /* forward layers to run: deepest requested layer + 1 */
    size_t *fwd_rows;      /* (n_fwd_rows) the prefix rows analysed at some L, ascending: the
                              rows whose logits the forward pass keeps */
    size_t n_fwd_rows;
    size_t *nN_L;          /* (nL): how many N of the grid are below each L */
    ns_row_layout *lay;    /* (nnormalizers, nL) */
    ns_analysis_params params[NS_PLAN_MAX_NORMALIZERS];
    size_t *block;         /* (nlayers, nheads, nnormalizers, nL): payload offset of row r = 0 */
    size_t payload;        /* doubles per task */
    ns_normalizer norm[NS_PLAN_MAX_NORMALIZERS];
    void *own;             /* the copies of the lists */
} ns_plan;

/* Build the plan of a checked grid (ns_plan_check and ns_plan_check_model passed; a grid that
 * did not gives NS_ERR_INVALID). Free with ns_plan_free. */
int ns_plan_init(ns_plan *p, const ns_grid *g, const ns_model_config *mc, ns_err *err);
void ns_plan_free(ns_plan *p);

const ns_row_layout *ns_plan_layout(const ns_plan *p, size_t ni, size_t Li);
/* Payload offset of row r of (layer index li, head index hi, normalizer ni, L index Li). */
size_t ns_plan_offset(const ns_plan *p, size_t li, size_t hi, size_t ni, size_t Li, size_t r);
/* Prefix row of (L index, r): L - 1 - r. */
size_t ns_plan_row(const ns_plan *p, size_t Li, size_t r);

/* ---- slices of the reduction ------------------------------------------------------------ */

/* The reduction works on slices (grid/ns_grid_derive.h: derived.nslices of them, each result
 * derived.slice.total doubles); slice k's rows lie at ns_plan_offset(.., r) of every payload.
 * Slice k's indices and its shape for ns_reduce_slice. */
void ns_plan_slice(const ns_plan *p, size_t k, double ks_alpha, size_t *li, size_t *hi,
                   size_t *ni, size_t *Li, ns_slice_shape *sh);

#endif
