/* test_rows: the rows stage. The plan (rows/ns_plan.h): single-value checks, the grid's checks
 * (each problem reported once, with its index), the payload layout (blocks in (layer, head,
 * normalizer, L) order, rows of records), nN_L, the plan's own copies of the lists, slices. The
 * runner (rows/ns_rows.h) on a tiny random GPT-2: its payload equals ns_analyze_head called
 * directly on the forward's captured logits and values (bitwise, for both kernels); the two
 * kernels agree through the runner (tests/ns_test_kernels.h); a run is deterministic and keyed
 * by the shard; a poll callback or layer hook that returns an error abandons the run with that
 * status. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_reduce.h"
#include "analysis/ns_row.h"
#include "analysis/ns_topn.h"
#include "rows/ns_plan.h"
#include "rows/ns_rows.h"
#include "ns_test.h"
#include "ns_test_kernels.h"
#include "ns_test_model.h"

/* ---- the plan's checks -------------------------------------------------------------------- */

static void test_single_value_checks(void)
{
    char b[256];
    CU_ASSERT_PTR_NOT_NULL(ns_range_check_u64(&ns_plan_range_N, 0, b, sizeof b));
    CU_ASSERT_PTR_NULL(ns_range_check_u64(&ns_plan_range_N, 1, b, sizeof b));
    CU_ASSERT_PTR_NULL(ns_range_check_u64(&ns_plan_range_N, 2147483647, b, sizeof b));
    CU_ASSERT_PTR_NOT_NULL(ns_range_check_u64(&ns_plan_range_N, 2147483648ull, b, sizeof b));
    const double bad[] = {0.0, -1.0, NAN, INFINITY, -INFINITY, 1e-101, 1e101, 1e-310};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(ns_range_check_real(&ns_plan_range_scale, bad[i], b, sizeof b));
    const double good[] = {1e-100, 0.01, 1.0, 100.0, 1e100};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CU_ASSERT_PTR_NULL(ns_range_check_real(&ns_plan_range_scale, good[i], b, sizeof b));
    CU_ASSERT_PTR_NULL(ns_range_check_u64(&ns_plan_range_probes, 0, b, sizeof b));
    CU_ASSERT_PTR_NULL(ns_range_check_u64(&ns_plan_range_probes, NS_PLAN_MAX_PROBES, b, sizeof b));
    CU_ASSERT_PTR_NOT_NULL(
        ns_range_check_u64(&ns_plan_range_probes, NS_PLAN_MAX_PROBES + 1, b, sizeof b));
    CU_ASSERT_PTR_NULL(ns_range_check_real(&ns_plan_range_s, 0.5, b, sizeof b));
    const double bad_s[] = {0.0, -0.5, NAN, INFINITY, 1e300};
    for (size_t i = 0; i < sizeof bad_s / sizeof bad_s[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(ns_range_check_real(&ns_plan_range_s, bad_s[i], b, sizeof b));
}

/* A report callback that records what it is told. */
typedef struct problems {
    size_t n;
    ns_plan_where where[16];
    size_t index[16];
    char text[16][512];
    int fail; /* return an error from the first call */
} problems;

static int note(void *user, ns_plan_where where, size_t index, const char *text)
{
    problems *p = user;
    if (p->fail)
        return NS_ERR_NOMEM;
    if (p->n < 16) {
        p->where[p->n] = where;
        p->index[p->n] = index;
        snprintf(p->text[p->n], sizeof p->text[0], "%s", text);
    }
    p->n++;
    return NS_OK;
}

/* How often (where, index) was reported. */
static int reported(const problems *p, ns_plan_where where, size_t index)
{
    int k = 0;
    for (size_t i = 0; i < p->n && i < 16; i++)
        k += p->where[i] == where && p->index[i] == index;
    return k;
}

static size_t gL[2] = {6, 12}, gN[5] = {1, 2, 4, 8, 11}, gLayers[2] = {0, 1}, gHeads[2] = {0, 3};
static double gT[2] = {0.1, 1.0}, gEps[2] = {1e-3, 1e-1};
static ns_normalizer gNorm[3] = {{.kind = NS_NORM_SOFTMAX, .s = 0}, {.kind = NS_NORM_ENTMAX15, .s = 0}, {.kind = NS_NORM_SSMAX, .s = 0.5}};

/* The test grid: L (6, 12), N (1, 2, 4, 8, 11), T (0.1, 1), two eps, layers (0, 1), heads (0, 3),
 * softmax, entmax15 and ssmax, three rows per prefix, windows of 12 tokens. */
static ns_grid test_grid(void)
{
    ns_grid g = {
        .L = gL, .nL = 2, .N = gN, .nN = 5, .T = gT, .nT = 2, .eps = gEps, .neps = 2,
        .layers = gLayers, .nlayers = 2, .heads = gHeads, .nheads = 2, .normalizers = gNorm,
        .nnormalizers = 3, .rows = 3, .L_max = 12, .sphere = 1, .probes = 2, .seed = 77,
    };
    return g;
}

static void test_grid_checks(void)
{
    tiny_model t;
    tiny_model_make(&t, 7); /* n_ctx 12, 2 layers, 4 heads */
    ns_err err;
    ns_grid g = test_grid();
    problems p = {0};
    CU_ASSERT_EQUAL(ns_plan_check(&g, note, &p, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_plan_check_model(&g, &t.m.config, "tiny", note, &p, &err), NS_OK);
    CU_ASSERT_EQUAL(p.n, 0);
    /* L = 40 > L_max (index 2 only), rows 9 > the smallest L (once) */
    size_t L3[3] = {8, 16, 40};
    g.L = L3, g.nL = 3, g.L_max = 16, g.rows = 9;
    memset(&p, 0, sizeof p);
    CU_ASSERT_EQUAL(ns_plan_check(&g, note, &p, &err), NS_OK);
    CU_ASSERT_EQUAL(p.n, 2);
    CU_ASSERT_EQUAL(reported(&p, NS_PLAN_AT_L, 2), 1);
    CU_ASSERT_EQUAL(reported(&p, NS_PLAN_AT_ROWS, 0), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.text[0], "L = 40"));
    /* against the model: L_max 16 > n_ctx 12, layers 2 and 5 (indices 1, 2), head 4 (index 1) */
    size_t layers[3] = {0, 2, 5}, heads[2] = {3, 4};
    g.layers = layers, g.nlayers = 3, g.heads = heads, g.nheads = 2;
    memset(&p, 0, sizeof p);
    CU_ASSERT_EQUAL(ns_plan_check_model(&g, &t.m.config, "tiny", note, &p, &err), NS_OK);
    CU_ASSERT_EQUAL(p.n, 4);
    CU_ASSERT_EQUAL(reported(&p, NS_PLAN_AT_L_MAX, 0), 1);
    CU_ASSERT_EQUAL(reported(&p, NS_PLAN_AT_LAYER, 1), 1);
    CU_ASSERT_EQUAL(reported(&p, NS_PLAN_AT_LAYER, 2), 1);
    CU_ASSERT_EQUAL(reported(&p, NS_PLAN_AT_HEAD, 1), 1);
    for (size_t i = 0; i < p.n; i++)
        CU_ASSERT_PTR_NOT_NULL(strstr(p.text[i], "tiny"));
    /* a failing report callback stops the check with an error */
    problems f = {.fail = 1};
    CU_ASSERT_EQUAL(ns_plan_check(&g, note, &f, &err), NS_ERR_NOMEM);
    CU_ASSERT_EQUAL(ns_plan_check_model(&g, &t.m.config, "tiny", note, &f, &err), NS_ERR_NOMEM);
    /* ns_plan_init refuses such a grid, naming the first problem */
    ns_plan plan;
    CU_ASSERT_EQUAL(ns_plan_init(&plan, &g, &t.m.config, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "L = 40"));
    g = test_grid();
    g.nnormalizers = 0;
    CU_ASSERT_EQUAL(ns_plan_init(&plan, &g, &t.m.config, &err), NS_ERR_INVALID);
    g = test_grid();
    g.rows = 0;
    CU_ASSERT_EQUAL(ns_plan_init(&plan, &g, &t.m.config, &err), NS_ERR_INVALID);
    tiny_model_free(&t);
}

/* ---- the plan's layout -------------------------------------------------------------------- */

static void test_plan_layout(void)
{
    tiny_model t;
    tiny_model_make(&t, 7);
    ns_err err;
    size_t L[2] = {6, 12}, N[5] = {1, 2, 4, 8, 11}, layers[1] = {1}, heads[2] = {0, 3};
    double T[2] = {0.1, 1.0};
    ns_grid g = test_grid();
    g.L = L, g.N = N, g.T = T, g.layers = layers, g.nlayers = 1, g.heads = heads;
    ns_plan p;
    CU_ASSERT_EQUAL_FATAL(ns_plan_init(&p, &g, &t.m.config, &err), NS_OK);
    /* the plan keeps its own copies of the lists */
    L[1] = 99, N[0] = 50, T[0] = 7.0, layers[0] = 0, heads[1] = 1;
    CU_ASSERT_EQUAL(p.g.L[1], 12);
    CU_ASSERT_EQUAL(p.g.N[0], 1);
    CU_ASSERT_EQUAL(p.g.T[0], 0.1);
    CU_ASSERT_EQUAL(p.g.layers[0], 1);
    CU_ASSERT_EQUAL(p.g.heads[1], 3);
    CU_ASSERT_EQUAL(p.derived.L_fwd, 12);
    /* the Jacobian bound min(1/(4T), sqrt 2) of the plan's own T (0.1, 1), computed once */
    CU_ASSERT_EQUAL(p.derived.jac_bound[0], M_SQRT2);
    CU_ASSERT_EQUAL(p.derived.jac_bound[1], 0.25);
    CU_ASSERT_EQUAL(p.n_layers_run, 2); /* layer 1 needs layers 0 and 1 */
    CU_ASSERT_EQUAL(p.nN_L[0], 3);       /* N < 6: 1, 2, 4 */
    CU_ASSERT_EQUAL(p.nN_L[1], 5);       /* N < 12: all */
    for (size_t ni = 0; ni < 3; ni++) {
        CU_ASSERT_EQUAL(p.params[ni].normalizer.kind, gNorm[ni].kind);
        CU_ASSERT_EQUAL(p.params[ni].nN, 5);
        CU_ASSERT_EQUAL(p.params[ni].seed, 77);
        CU_ASSERT_EQUAL(p.params[ni].probes, 2);
        for (size_t Li = 0; Li < 2; Li++) {
            const ns_row_layout *lay = ns_plan_layout(&p, ni, Li);
            ns_row_layout want;
            ns_row_layout_init(&want, 2, p.nN_L[Li], 2, ns_topn_rank_is_T_free(&gNorm[ni]));
            CU_ASSERT_EQUAL(lay->total, want.total);
            CU_ASSERT_EQUAL(lay->nN, p.nN_L[Li]);
            CU_ASSERT_EQUAL(lay->t_free_rank, ni != 1);
        }
    }
    /* blocks: (layer, head, normalizer, L) in order, each rows x the layout's record */
    size_t off = 0;
    for (size_t hi = 0; hi < 2; hi++)
        for (size_t ni = 0; ni < 3; ni++)
            for (size_t Li = 0; Li < 2; Li++) {
                size_t rec = ns_plan_layout(&p, ni, Li)->total;
                for (size_t r = 0; r < 3; r++)
                    CU_ASSERT_EQUAL(ns_plan_offset(&p, 0, hi, ni, Li, r), off + r * rec);
                CU_ASSERT_EQUAL(ns_plan_row(&p, Li, 0), p.g.L[Li] - 1);
                CU_ASSERT_EQUAL(ns_plan_row(&p, Li, 2), p.g.L[Li] - 3);
                off += 3 * rec;
            }
    CU_ASSERT_EQUAL(p.payload, off);
    /* slices: one per (layer, head, normalizer, L), L fastest */
    CU_ASSERT_EQUAL(p.derived.nslices, 12);
    size_t total = 0, cells = 0;
    for (size_t k = 0; k < 12; k++) {
        size_t li, hi, ni, Li;
        ns_slice_shape sh;
        ns_plan_slice(&p, k, 0.05, &li, &hi, &ni, &Li, &sh);
        CU_ASSERT_EQUAL(li, 0);
        CU_ASSERT_EQUAL(hi, k / 6);
        CU_ASSERT_EQUAL(ni, (k / 2) % 3);
        CU_ASSERT_EQUAL(Li, k % 2);
        CU_ASSERT_PTR_EQUAL(sh.lay, ns_plan_layout(&p, ni, Li));
        CU_ASSERT_EQUAL(sh.L, p.g.L[Li]);
        CU_ASSERT(sh.N == p.g.N && sh.nN == 5 && sh.T == p.g.T && sh.nT == 2 && sh.neps == 2);
        CU_ASSERT_EQUAL(sh.ks_alpha, 0.05);
        CU_ASSERT_PTR_EQUAL(sh.jac_bound, p.derived.jac_bound);
        ns_slice_layout sl;
        ns_slice_layout_init(&sl, &sh);
        if (k == 0) {
            total = sl.total;
            for (int m = 0; m < NS_M_COUNT; m++)
                cells += sl.cells[m];
        }
        CU_ASSERT_EQUAL(sl.total, total); /* every slice's result has the same size */
    }
    CU_ASSERT_EQUAL(p.derived.slice.total, total);
    CU_ASSERT_EQUAL(ns_grid_slice_samples(&p.derived, 7), cells * 7);
    ns_plan_free(&p);
    tiny_model_free(&t);
}

/* The memory estimate follows the plan: the payload is at least the plan's doubles, a task needs
 * the payload twice (results and the master's receive buffer) besides the workspaces, keeping
 * the samples costs more on rank 0; ns_plan_check_memory reports the task and the reduction at
 * NS_PLAN_AT_GRID when they exceed the limit, and nothing without a limit. */
static void test_plan_memory(void)
{
    tiny_model t;
    tiny_model_make(&t, 7);
    ns_err err;
    ns_grid g = test_grid();
    ns_plan p;
    CU_ASSERT_EQUAL_FATAL(ns_plan_init(&p, &g, &t.m.config, &err), NS_OK);
    ns_plan_memory m, mk;
    ns_plan_memory_estimate(&g, &t.m.config, 10, 0, &m);
    ns_plan_memory_estimate(&g, &t.m.config, 10, 1, &mk);
    CU_ASSERT(m.payload >= (double)(p.payload * sizeof(double)));
    CU_ASSERT(m.payload <= (double)((p.payload + 16) * sizeof(double)));
    CU_ASSERT(m.task >= 2.0 * m.payload);
    CU_ASSERT(mk.reduce > m.reduce && mk.task == m.task && mk.payload == m.payload);
    /* the samples of every slice: at least S doubles per cell per slice */
    double S = 10.0 * (double)g.rows;
    CU_ASSERT(mk.reduce - m.reduce >=
              sizeof(double) * S * (double)ns_grid_slice_samples(&p.derived, 1) *
                  (double)p.derived.nslices);
    problems q = {0};
    CU_ASSERT_EQUAL(ns_plan_check_memory(&g, &t.m.config, 10, 1, 0.0, note, &q, &err), NS_OK);
    CU_ASSERT_EQUAL(q.n, 0);
    CU_ASSERT_EQUAL(ns_plan_check_memory(&g, &t.m.config, 10, 1, 1e12, note, &q, &err), NS_OK);
    CU_ASSERT_EQUAL(q.n, 0);
    CU_ASSERT_EQUAL(ns_plan_check_memory(&g, &t.m.config, 10, 1, 1024.0, note, &q, &err), NS_OK);
    CU_ASSERT_EQUAL(q.n, 2);
    CU_ASSERT_EQUAL(reported(&q, NS_PLAN_AT_GRID, 0), 2);
    ns_plan_free(&p);
    tiny_model_free(&t);
}

/* ---- the runner --------------------------------------------------------------------------- */

typedef struct poll_state {
    size_t calls;
    size_t fail_at; /* return an error on this call (1-based; 0 never) */
} poll_state;

static int poll_fn(void *user, ns_err *err)
{
    poll_state *ps = user;
    ps->calls++;
    if (ps->fail_at && ps->calls == ps->fail_at)
        return ns_fail(err, NS_ERR_INTERRUPTED, "stop requested by the test (poll %zu)", ps->calls);
    return NS_OK;
}

typedef struct hook_state {
    layer_capture cap;
    int fail; /* return NS_ERR_IO from the first layer */
} hook_state;

static int hook_fn(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    hook_state *hs = user;
    if (hs->fail)
        return ns_fail(err, NS_ERR_IO, "layer hook failed at layer %zu", v->layer);
    return layer_capture_fn(&hs->cap, v, err);
}

/* The planned rows of block (li, hi, ni, Li) analysed directly on the captured layer, with the
 * runner's key, into out (rows records). */
static void direct_block(const ns_plan *p, const layer_capture *cap, uint64_t shard, size_t li,
                         size_t hi, size_t ni, size_t Li, ns_kernel kernel, double *out,
                         size_t *ms)
{
    const ns_grid *g = &p->g;
    ns_head_input in = layer_capture_head(cap, g->layers[li], g->heads[hi]);
    ns_head_key key = {shard, (uint32_t)g->layers[li], (uint32_t)g->heads[hi]};
    const ns_row_layout *lay = ns_plan_layout(p, ni, Li);
    ns_row_request rq[8];
    for (size_t r = 0; r < g->rows; r++) {
        ms[r] = ns_plan_row(p, Li, r);
        rq[r] = (ns_row_request){ms[r], lay, out + r * lay->total};
    }
    ns_analysis_ws *ws = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_analysis_ws_new(&p->params[ni], cap->L, cap->D, &ws, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_analyze_head(&p->params[ni], &key, &in, rq, g->rows, kernel, ws, &err), NS_OK);
    ns_analysis_ws_free(ws);
}

static int bits_equal(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i]))))
            return 0;
    return 1;
}

/* Run the window through the runner with kernel, capturing every layer; returns the payload. */
static double *run_window(const ns_plan *p, const tiny_model *t, ns_kernel kernel, uint64_t shard,
                          const int32_t *tokens, hook_state *hs, poll_state *ps, int *rc)
{
    ns_rows *r = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_rows_new(p, &t->m, kernel, 0, &r, &err), NS_OK);
    double *payload = malloc(p->payload * sizeof *payload);
    CU_ASSERT_FATAL(payload != NULL);
    ns_rows_hooks hooks = {poll_fn, ps, hook_fn, hs};
    *rc = ns_rows_run(r, shard, tokens, &hooks, payload, &err);
    if (*rc != NS_OK)
        fprintf(stderr, "ns_rows_run: %s\n", err.msg);
    ns_rows_free(r);
    return payload;
}

static void test_runner_matches_direct_analysis(void)
{
    tiny_model t;
    tiny_model_make(&t, 7);
    ns_err err;
    ns_grid g = test_grid();
    ns_plan p;
    CU_ASSERT_EQUAL_FATAL(ns_plan_init(&p, &g, &t.m.config, &err), NS_OK);
    const ns_model_config *c = &t.m.config;
    int32_t tokens[12];
    tiny_tokens(tokens, 12, c->vocab_size, 42);
    kernel_agreement ka = {0};
    double *pay[2];
    for (int kern = 0; kern < 2; kern++) {
        hook_state hs = {0};
        poll_state ps = {0};
        CU_ASSERT_EQUAL_FATAL(layer_capture_init(&hs.cap, c->n_layer, c->n_head,
                                                 c->d_head, 12), 0);
        int rc;
        pay[kern] = run_window(&p, &t, (ns_kernel)kern, 3, tokens, &hs, &ps, &rc);
        CU_ASSERT_EQUAL(rc, NS_OK);
        CU_ASSERT_EQUAL(hs.cap.calls, p.n_layers_run);
        CU_ASSERT_EQUAL(ps.calls, g.nlayers * g.nheads); /* once per analysed (layer, head) */
        int bad = 0;
        for (size_t li = 0; li < g.nlayers; li++)
            for (size_t hi = 0; hi < g.nheads; hi++)
                for (size_t ni = 0; ni < g.nnormalizers; ni++)
                    for (size_t Li = 0; Li < g.nL; Li++) {
                        const ns_row_layout *lay = ns_plan_layout(&p, ni, Li);
                        double want[3 * 512];
                        size_t ms[8];
                        CU_ASSERT_FATAL(3 * lay->total <= sizeof want / sizeof want[0]);
                        direct_block(&p, &hs.cap, 3, li, hi, ni, Li, (ns_kernel)kern, want, ms);
                        const double *got = pay[kern] + ns_plan_offset(&p, li, hi, ni, Li, 0);
                        bad += !bits_equal(got, want, g.rows * lay->total);
                        if (kern == NS_KERNEL_FAST) { /* the reference ran first (kernel 0) */
                            ns_head_input in = layer_capture_head(&hs.cap, g.layers[li], g.heads[hi]);
                            ns_head_key key = {3, (uint32_t)g.layers[li], (uint32_t)g.heads[hi]};
                            size_t o = ns_plan_offset(&p, li, hi, ni, Li, 0);
                            CU_ASSERT_EQUAL(ka_compare_head(&ka, &p.params[ni], &key, &in, ms,
                                                            g.rows, lay, got, pay[NS_KERNEL_REFERENCE] + o),
                                            0);
                        }
                    }
        CU_ASSERT_EQUAL(bad, 0);
        layer_capture_free(&hs.cap);
    }
    ka_print(&ka, "runner, fast vs reference");
    CU_ASSERT_EQUAL(ka.bad, 0);
    CU_ASSERT(ka.cells > 0 && ka.skipped > 0);
    free(pay[0]);
    free(pay[1]);
    ns_plan_free(&p);
    tiny_model_free(&t);
}

/* Deterministic and keyed by the shard: the same window twice gives the same bits (also with a
 * reused runner); another shard index changes distance_random and jac_fd only. */
static void test_runner_determinism(void)
{
    tiny_model t;
    tiny_model_make(&t, 7);
    ns_err err;
    ns_grid g = test_grid();
    ns_plan p;
    CU_ASSERT_EQUAL_FATAL(ns_plan_init(&p, &g, &t.m.config, &err), NS_OK);
    int32_t tokens[12];
    tiny_tokens(tokens, 12, t.m.config.vocab_size, 42);
    ns_rows *r = NULL;
    CU_ASSERT_EQUAL_FATAL(ns_rows_new(&p, &t.m, NS_KERNEL_FAST, 0, &r, &err), NS_OK);
    double *a = malloc(p.payload * sizeof *a), *b = malloc(p.payload * sizeof *b);
    double *c = malloc(p.payload * sizeof *c);
    CU_ASSERT_FATAL(a && b && c);
    CU_ASSERT_EQUAL(ns_rows_run(r, 5, tokens, NULL, a, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_rows_run(r, 5, tokens, NULL, b, &err), NS_OK);
    CU_ASSERT(bits_equal(a, b, p.payload));
    CU_ASSERT_EQUAL(ns_rows_run(r, 6, tokens, NULL, c, &err), NS_OK);
    int random_differs = 0, fd_differs = 0, other_differs = 0;
    for (size_t k = 0; k < p.derived.nslices; k++) {
        size_t li, hi, ni, Li;
        ns_slice_shape sh;
        ns_plan_slice(&p, k, 0.01, &li, &hi, &ni, &Li, &sh);
        for (size_t row = 0; row < g.rows; row++) {
            size_t off = ns_plan_offset(&p, li, hi, ni, Li, row);
            for (int id = 0; id < NS_M_COUNT; id++) {
                size_t o = sh.lay->offset[id];
                if (o == SIZE_MAX)
                    continue;
                size_t next = sh.lay->total;
                for (int j = 0; j < NS_M_COUNT; j++)
                    if (sh.lay->offset[j] != SIZE_MAX && sh.lay->offset[j] > o &&
                        sh.lay->offset[j] < next)
                        next = sh.lay->offset[j];
                int d = !bits_equal(a + off + o, c + off + o, next - o);
                if (id == NS_M_DISTANCE_RANDOM)
                    random_differs |= d;
                else if (id == NS_M_JAC_FD)
                    fd_differs |= d;
                else
                    other_differs |= d;
            }
        }
    }
    CU_ASSERT(random_differs);
    CU_ASSERT(fd_differs);
    CU_ASSERT(!other_differs);
    ns_rows_free(r);
    free(a);
    free(b);
    free(c);
    ns_plan_free(&p);
    tiny_model_free(&t);
}

/* A poll that returns an error abandons the window with that status and message: no later poll,
 * no later layer; a failing layer hook likewise (before any poll). The runner is usable again
 * afterwards and gives the same payload as a fresh one. */
static void test_runner_abandons(void)
{
    tiny_model t;
    tiny_model_make(&t, 7);
    ns_err err;
    ns_grid g = test_grid();
    ns_plan p;
    CU_ASSERT_EQUAL_FATAL(ns_plan_init(&p, &g, &t.m.config, &err), NS_OK);
    const ns_model_config *c = &t.m.config;
    int32_t tokens[12];
    tiny_tokens(tokens, 12, c->vocab_size, 42);
    ns_rows *r = NULL;
    CU_ASSERT_EQUAL_FATAL(ns_rows_new(&p, &t.m, NS_KERNEL_FAST, 0, &r, &err), NS_OK);
    double *pay = malloc(p.payload * sizeof *pay), *ref = malloc(p.payload * sizeof *ref);
    CU_ASSERT_FATAL(pay && ref);
    hook_state hs = {0};
    CU_ASSERT_EQUAL_FATAL(layer_capture_init(&hs.cap, c->n_layer, c->n_head, c->n_embd / c->n_head,
                                             12), 0);
    /* polls come before each analysed head: layer 0 head 0 (1), head 3 (2), layer 1 ... */
    poll_state ps = {0, 2};
    ns_rows_hooks hooks = {poll_fn, &ps, hook_fn, &hs};
    CU_ASSERT_EQUAL(ns_rows_run(r, 1, tokens, &hooks, pay, &err), NS_ERR_INTERRUPTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "stop requested by the test (poll 2)"));
    CU_ASSERT_EQUAL(ps.calls, 2);
    CU_ASSERT_EQUAL(hs.cap.calls, 1); /* layer 1 never ran */
    /* a failing layer hook: no poll at all */
    ps = (poll_state){0, 0};
    hs.fail = 1;
    CU_ASSERT_EQUAL(ns_rows_run(r, 1, tokens, &hooks, pay, &err), NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "layer hook failed at layer 0"));
    CU_ASSERT_EQUAL(ps.calls, 0);
    /* the same runner afterwards, against a fresh one */
    CU_ASSERT_EQUAL(ns_rows_run(r, 1, tokens, NULL, pay, &err), NS_OK);
    ns_rows *fresh = NULL;
    CU_ASSERT_EQUAL_FATAL(ns_rows_new(&p, &t.m, NS_KERNEL_FAST, 0, &fresh, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_rows_run(fresh, 1, tokens, NULL, ref, &err), NS_OK);
    CU_ASSERT(bits_equal(pay, ref, p.payload));
    ns_rows_free(fresh);
    ns_rows_free(r);
    layer_capture_free(&hs.cap);
    free(pay);
    free(ref);
    ns_plan_free(&p);
    tiny_model_free(&t);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rows", NULL, NULL);
    CU_add_test(s, "single-value checks", test_single_value_checks);
    CU_add_test(s, "grid checks report each problem once, with its index", test_grid_checks);
    CU_add_test(s, "plan: payload layout, nN_L, own copies, slices", test_plan_layout);
    CU_add_test(s, "plan: memory estimate and check", test_plan_memory);
    CU_add_test(s, "runner = direct analysis of the captured forward; kernels agree",
                test_runner_matches_direct_analysis);
    CU_add_test(s, "runner: deterministic, keyed by the shard", test_runner_determinism);
    CU_add_test(s, "runner: an error from poll or layer hook abandons the window",
                test_runner_abandons);
    return ns_test_run_all();
}
