/* rng_vectors: values of the counter-based generator (src/analysis/ns_rng.c) for
 * tests/check_rng.py, which recomputes them with the report's Python generator
 * (postprocess/normsweep_report/rng.py) and demands the same bits:
 *   mix X -> ns_rng_mix64(X); key W... -> ns_rng_key; u64 KEY K -> the first K draws of the
 *   stream; below KEY N K -> K draws of ns_rng_below(N) (with N near 2^63 half the raw draws
 *   are rejected); boot SEED B S -> the S shards drawn for bootstrap resample B (the key
 *   (TAG_BOOTSTRAP, SEED, B), docs/STATISTICS.md). Every number in hexadecimal. */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/ns_rng.h"

#define TAG_BOOTSTRAP 0x626f6f7473747270ULL /* "bootstrp" */

static void draws_below(uint64_t key, uint64_t n, int k, const char *tag)
{
    ns_rng r;
    ns_rng_init(&r, key);
    printf("%s %" PRIx64 " %" PRIx64 " %d:", tag, key, n, k);
    for (int i = 0; i < k; i++)
        printf(" %" PRIx64, ns_rng_below(&r, n));
    printf("\n");
}

int main(void)
{
    const uint64_t xs[] = {0, 1, 0x9e3779b97f4a7c15ULL, UINT64_MAX, 0x123456789abcdefULL};
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
        printf("mix %" PRIx64 " %" PRIx64 "\n", xs[i], ns_rng_mix64(xs[i]));
    const uint64_t w[] = {TAG_BOOTSTRAP, 0, 7, UINT64_MAX, 42};
    for (size_t n = 0; n <= 5; n++) {
        printf("key");
        for (size_t i = 0; i < n; i++)
            printf(" %" PRIx64, w[i]);
        printf(" -> %" PRIx64 "\n", ns_rng_key(w, n));
    }
    ns_rng r;
    ns_rng_init(&r, 0xfeedULL);
    printf("u64 feed 8:");
    for (int i = 0; i < 8; i++)
        printf(" %" PRIx64, ns_rng_u64(&r));
    printf("\n");
    const uint64_t ns[] = {1, 2, 3, 48, 796, 1000003, (1ULL << 63) + 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        draws_below(0xabcdefULL + i, ns[i], 12, "below");
    const uint64_t seeds[] = {0, 1, 12345};
    const uint64_t shards[] = {1, 5, 48, 796};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 4; j++)
            for (uint64_t b = 0; b < 3; b++) {
                uint64_t kw[3] = {TAG_BOOTSTRAP, seeds[i], b};
                ns_rng_init(&r, ns_rng_key(kw, 3));
                printf("boot %" PRIx64 " %" PRIx64 " %" PRIx64 ":", seeds[i], b, shards[j]);
                for (uint64_t s = 0; s < shards[j]; s++)
                    printf(" %" PRIx64, ns_rng_below(&r, shards[j]));
                printf("\n");
            }
    return 0;
}
