/* ns_rng: counter-based SplitMix64-style generator keyed by a tuple of 64-bit words. */
#include "analysis/ns_rng.h"

#include <math.h>
#include <string.h>

#define NS_RNG_GAMMA 0x9e3779b97f4a7c15ULL

uint64_t ns_rng_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t ns_rng_key(const uint64_t *words, size_t n)
{
    /* Sponge-like chaining: each word is absorbed through a full mix, with its position folded
     * in so (a, b) and (b, a) give different keys. */
    uint64_t h = ns_rng_mix64(0x6e6f726d73776565ULL + (uint64_t)n * NS_RNG_GAMMA);
    for (size_t i = 0; i < n; i++)
        h = ns_rng_mix64(h ^ ns_rng_mix64(words[i] + (uint64_t)(i + 1) * NS_RNG_GAMMA));
    return h;
}

uint64_t ns_rng_double_bits(double x)
{
    if (x == 0.0)
        x = 0.0;
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

void ns_rng_init(ns_rng *r, uint64_t key)
{
    r->key = key;
    r->ctr = 0;
}

uint64_t ns_rng_u64(ns_rng *r)
{
    r->ctr++;
    return ns_rng_mix64(r->key + r->ctr * NS_RNG_GAMMA);
}

double ns_rng_uniform(ns_rng *r)
{
    return (double)(ns_rng_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t ns_rng_below(ns_rng *r, uint64_t n)
{
    /* Reject the top partial block so every residue is equally likely. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % n + 1) % n; /* largest multiple of n, minus 1 */
    for (;;) {
        uint64_t x = ns_rng_u64(r);
        if (x <= limit)
            return x % n;
    }
}

void ns_rng_normal2(ns_rng *r, double out[2])
{
    double u1 = ((double)(ns_rng_u64(r) >> 11) + 1.0) * 0x1.0p-53; /* (0, 1] */
    double u2 = ns_rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1)), ang = 2.0 * M_PI * u2;
    out[0] = rad * cos(ang);
    out[1] = rad * sin(ang);
}

