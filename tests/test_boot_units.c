/* test_boot_units: how the bootstrap's work is shared over ranks (analysis/ns_boot_units.h,
 * ns_boot_shard_assign, ns_intervals_units / ns_intervals_pack): the greedy assignment gives the
 * owners counted by hand (costs in decreasing order, ties to the lower index and the lower rank,
 * a full rank skipped) and refuses caps that cannot hold every unit; on a small hand-made grid
 * (2 L, 3 N, 5 T, 2 layers x 2 heads, 6 shards x 2 rows, B = 40), the units given to 2, 3, 4 and
 * 7 ranks respect the caps (at most ceil(G / P) means units and ceil(G / P) nL KS units a rank),
 * spread the three claims' temperatures' means over three ranks when there are three, and,
 * computed rank by rank from the two pieces of each T part, packed and unpacked, give every
 * statistic's estimate, ends and jac_exact_max_hmax replicates with the same bits as
 * ns_intervals_compute in one process. (End to end across MPI ranks: tests/sweep_intervals.sh.) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot_shard.h"
#include "analysis/ns_boot_units.h"
#include "analysis/ns_intervals.h"
#include "ns_test.h"

static void test_assign(void)
{
    ns_err err;
    /* by cost: u0 5, u2 4, u3 3, u4 3, u5 2, u1 1. u0 -> rank 0 (a tie of empty ranks); u2, a
     * second unit of kind 0, cannot join it (cap 1) -> rank 1 (4); u3 -> rank 1 (4 < 5: 7);
     * u4 -> rank 0 (5 < 7: 8); u5 -> rank 1 (7 < 8: 9); u1 -> rank 0 (8 < 9: 9) */
    const double cost[6] = {5, 1, 4, 3, 3, 2};
    const unsigned char kind[6] = {0, 1, 0, 1, 1, 1};
    size_t owner[6], cap[2] = {1, 3};
    CU_ASSERT_EQUAL_FATAL(ns_boot_shard_assign(cost, kind, 6, 2, cap, owner, &err), NS_OK);
    const size_t want[6] = {0, 0, 1, 1, 0, 1};
    for (int u = 0; u < 6; u++)
        CU_ASSERT_EQUAL(owner[u], want[u]);
    /* a full rank is skipped: u0 (10) -> rank 0, u1 and u2 (1 each) -> rank 1, which then holds
     * its cap of 2, so u3 goes to rank 0 although rank 1's load (2) is the lighter */
    const double c2[4] = {10, 1, 1, 1};
    const unsigned char k2[4] = {1, 1, 1, 1};
    size_t o2[4], cap2[2] = {0, 2};
    CU_ASSERT_EQUAL_FATAL(ns_boot_shard_assign(c2, k2, 4, 2, cap2, o2, &err), NS_OK);
    CU_ASSERT(o2[0] == 0 && o2[1] == 1 && o2[2] == 1 && o2[3] == 0);
    /* without the cap it would not have been: u3 -> rank 1 */
    cap2[1] = 4;
    CU_ASSERT_EQUAL_FATAL(ns_boot_shard_assign(c2, k2, 4, 2, cap2, o2, &err), NS_OK);
    CU_ASSERT(o2[0] == 0 && o2[1] == 1 && o2[2] == 1 && o2[3] == 1);
    /* caps that cannot hold the units: refused */
    cap2[1] = 1;
    CU_ASSERT_EQUAL(ns_boot_shard_assign(c2, k2, 4, 3, cap2, o2, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_boot_shard_assign(c2, k2, 4, 0, cap2, o2, &err), NS_ERR_INVALID);
}

/* The hand-made grid. */
enum { NL = 2, NN = 3, NT = 5, NLAY = 2, NHEAD = 2, H = NLAY * NHEAD, S = 6, ROWS = 2, B = 40 };
static const size_t Ls[NL] = {8, 16}, Ns[NN] = {1, 2, 12}, lays[NLAY] = {0, 1};
static const double Ts[NT] = {0.01, 0.1, 1.0, 10.0, 100.0};

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static double uniform(void) /* xorshift64*, in (0, 1) */
{
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return ((double)((rng_state * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
}

/* Every slice's T parts (the block layout of ns_boot_shard.h) filled with values of the right
 * kinds: per shard 2 rows (one where shard s is 0 at N = 2, so the counts are not uniform), none
 * where N >= L (N = 12 at L = 8), positive sums and maxima, KS rows drawn with some ties. */
static void fill(double *blocks, double *ent)
{
    size_t part = ns_boot_shard_tsize(NN, S, ROWS), front = ns_boot_shard_front(NN, S);
    for (size_t Li = 0; Li < NL; Li++)
        for (size_t h = 0; h < H; h++)
            for (size_t t = 0; t < NT; t++) {
                size_t j = (Li * H + h) * NT + t;
                double *p = blocks + j * part;
                ent[j] = uniform();
                for (size_t k = 0; k < NS_BOOT_MEANS; k++)
                    for (size_t n = 0; n < NN; n++)
                        for (size_t s = 0; s < S; s++) {
                            double c = Ns[n] >= Ls[Li] ? 0.0 : (n == 1 && s == 0 ? 1.0 : 2.0);
                            p[ns_boot_shard_mean(NN, S, k, n) + s] = c * uniform();
                            p[ns_boot_shard_mean(NN, S, k, n) + S + s] = c;
                        }
                for (size_t s = 0; s < S; s++) {
                    p[ns_boot_shard_entropy(NN, S) + s] = 2.0 * uniform();
                    p[ns_boot_shard_entropy(NN, S) + S + s] = 2.0;
                    p[ns_boot_shard_jac(NN, S) + s] = 1.0 / Ts[t] * uniform();
                }
                for (size_t k = 0; k < NS_BOOT_KS_SAMPLES; k++)
                    for (size_t n = 0; n < NN; n++)
                        for (size_t i = 0; i < S * ROWS; i++)
                            p[front + ns_boot_shard_ks(NN, S, ROWS, k, n) + i] =
                                Ns[n] >= Ls[Li] ? NAN : floor(uniform() * (8.0 + (double)k)) / 8.0;
            }
}

static int same_array(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

static void test_units(void)
{
    size_t part = ns_boot_shard_tsize(NN, S, ROWS), front = ns_boot_shard_front(NN, S);
    size_t nparts = NL * H * NT, G = NT, per = 1 + NL;
    double *blocks = malloc(nparts * part * sizeof *blocks);
    double ent[NL * H * NT];
    const double *fronts[NL * H * NT], *kss[NL * H * NT];
    CU_ASSERT_PTR_NOT_NULL_FATAL(blocks);
    fill(blocks, ent);
    for (size_t j = 0; j < nparts; j++)
        fronts[j] = blocks + j * part, kss[j] = blocks + j * part + front;
    ns_ci_input in = {
        .nnorm = 1, .nL = NL, .nT = NT, .nN = NN, .nlayers = NLAY, .nheads = NHEAD, .L = Ls,
        .N = Ns, .layers = lays, .T = Ts, .n_shards = S, .rows = ROWS, .ks_alpha = 0.05,
        .seed = 7, .B = B, .block = fronts, .ks_block = kss, .entropy_mean = ent,
    };
    ns_err err;
    ns_intervals ref;
    CU_ASSERT_EQUAL_FATAL(ns_intervals_compute(&in, &ref, &err), NS_OK);
    /* the reference is not empty: distance_mean_hmedian's interval at L = 16, T = 1, N = 1
     * (all heads) is finite, and also the KS distance's */
    size_t i = (((0 * NL + 1) * NT + 2) * NN + 0) * ref.nsets + 0;
    CU_ASSERT(isfinite(ref.lo[NS_CI_DISTANCE][i]) && isfinite(ref.hi[NS_CI_DISTANCE][i]));
    CU_ASSERT(isfinite(ref.lo[NS_CI_KS_EXPECTED][i]) && isfinite(ref.hi[NS_CI_KS_EXPECTED][i]));
    size_t U = ns_intervals_nunits(&in), jac = NT * NL * ref.nsets * (B + 1);
    CU_ASSERT_EQUAL(U, NT * per);
    size_t owner[NT * (1 + NL)];
    const size_t Ps[4] = {2, 3, 4, 7};
    for (int pi = 0; pi < 4; pi++) {
        size_t P = Ps[pi], each = (G + P - 1) / P, held[7][2] = {{0}};
        CU_ASSERT_EQUAL_FATAL(ns_boot_units_assign(&in, P, owner, &err), NS_OK);
        for (size_t u = 0; u < U; u++) {
            CU_ASSERT_FATAL(owner[u] < P);
            held[owner[u]][u % per != 0]++;
        }
        for (size_t r = 0; r < P; r++)
            CU_ASSERT(held[r][0] <= each && held[r][1] <= each * NL);
        if (P >= 3) /* T = 0.1, 1, 10: the claims' temperatures, the heavy means units */
            CU_ASSERT(owner[1 * per] != owner[2 * per] && owner[2 * per] != owner[3 * per] &&
                      owner[1 * per] != owner[3 * per]);
        ns_intervals all;
        CU_ASSERT_EQUAL_FATAL(ns_intervals_init(&in, &all, &err), NS_OK);
        size_t sum = 0;
        for (size_t r = 0; r < P; r++) {
            ns_intervals mine;
            CU_ASSERT_EQUAL_FATAL(ns_intervals_init(&in, &mine, &err), NS_OK);
            CU_ASSERT_EQUAL_FATAL(ns_intervals_units(&in, owner, r, &mine, &err), NS_OK);
            size_t n = ns_intervals_pack(&in, &mine, owner, r, NULL, 0);
            double *buf = malloc((n + 1) * sizeof *buf);
            CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
            CU_ASSERT_EQUAL(ns_intervals_pack(&in, &mine, owner, r, buf, 0), n);
            CU_ASSERT_EQUAL(ns_intervals_pack(&in, &all, owner, r, buf, 1), n);
            sum += n;
            free(buf);
            ns_intervals_free(&mine);
        }
        CU_ASSERT_EQUAL(sum, ns_intervals_pack(&in, &all, NULL, 0, NULL, 0));
        CU_ASSERT_EQUAL_FATAL(ns_intervals_finish(&in, &all, &err), NS_OK);
        for (int id = 0; id < NS_CI_COUNT; id++) {
            CU_ASSERT(same_array(all.est[id], ref.est[id], ref.len[id]));
            CU_ASSERT(same_array(all.lo[id], ref.lo[id], ref.len[id]));
            CU_ASSERT(same_array(all.hi[id], ref.hi[id], ref.len[id]));
        }
        CU_ASSERT(same_array(all.jac_reps, ref.jac_reps, jac));
        ns_intervals_free(&all);
    }
    /* the check can fail: one rank's units alone leave the others' values NaN */
    ns_intervals one;
    CU_ASSERT_EQUAL_FATAL(ns_boot_units_assign(&in, 2, owner, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_intervals_init(&in, &one, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_intervals_units(&in, owner, 0, &one, &err), NS_OK);
    int differ = 0;
    for (int id = 0; id < NS_CI_COUNT; id++)
        differ |= !same_array(one.est[id], ref.est[id], ref.len[id]);
    CU_ASSERT(differ);
    ns_intervals_free(&one);
    ns_intervals_free(&ref);
    free(blocks);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("boot_units", NULL, NULL);
    CU_add_test(s, "greedy assignment under caps, counted by hand", test_assign);
    CU_add_test(s, "the catalogue in units over 2, 3, 4 and 7 ranks vs one process",
                test_units);
    return ns_test_run_all();
}
