/* ns_rng: a counter-based random generator (SplitMix64 finalizer over key + counter), so a draw
 * depends only on its key tuple and position, never on which process or thread makes it. */
#ifndef NS_RNG_H
#define NS_RNG_H

#include <stddef.h>
#include <stdint.h>

/* The SplitMix64 finalizer: a bijective 64-bit mix. */
uint64_t ns_rng_mix64(uint64_t x);

/* A 64-bit key hashed from words[0..n) (order matters). */
uint64_t ns_rng_key(const uint64_t *words, size_t n);

/* The bits of a double, so a temperature can be part of a key (-0.0 is mapped to +0.0). */
uint64_t ns_rng_double_bits(double x);

/* A stream: draw k of the stream keyed by `key` is ns_rng_mix64(key + (k + 1) * golden gamma). */
typedef struct ns_rng {
    uint64_t key;
    uint64_t ctr;
} ns_rng;

void ns_rng_init(ns_rng *r, uint64_t key);
uint64_t ns_rng_u64(ns_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double ns_rng_uniform(ns_rng *r);
/* Uniform integer in [0, n) without modulo bias (rejection); n >= 1. */
uint64_t ns_rng_below(ns_rng *r, uint64_t n);
/* Two independent standard normals from one Box-Muller pair (cos and sin branches). */
void ns_rng_normal2(ns_rng *r, double out[2]);

#endif
