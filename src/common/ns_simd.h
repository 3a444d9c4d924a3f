/* ns_simd: four doubles at a time for the analysis's hot loops (GCC vector extensions), and
 * NS_HOT, which compiles a function twice -- for AVX2 and for the x86-64 baseline -- and picks
 * one at run time. Elementwise IEEE operations, no FMA (-ffp-contract=off) and reductions in a
 * fixed lane order (lane l takes keys i = l mod 4, then ((0 + 1) + 2) + 3) give the same bits
 * whichever is picked. For src/norm and src/analysis, which compile with those flags
 * (-fno-math-errno -ffp-contract=off, their local.mk files).
 *
 * v4d values pass only between static inline functions of one file, so GCC's note on the ABI
 * of 32-byte vectors without AVX concerns no external caller (-Wpsabi is silenced for that). */
#ifndef NS_SIMD_H
#define NS_SIMD_H

#include <math.h>

#pragma GCC diagnostic ignored "-Wpsabi"
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4i __attribute__((vector_size(32)));
typedef unsigned long long v4u __attribute__((vector_size(32)));
typedef double v4d_u __attribute__((vector_size(32), aligned(8), may_alias)); /* unaligned */

/* -DNS_NO_CLONES builds the baseline only (to compare its bits with the AVX2 clones'). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(NS_NO_CLONES)
#define NS_HOT __attribute__((target_clones("avx2", "default")))
#else
#define NS_HOT
#endif

#define NS_INLINE static inline __attribute__((always_inline))

NS_INLINE v4d load4(const double *p)
{
    return *(const v4d_u *)(const void *)p;
}

NS_INLINE void store4(double *p, v4d v)
{
    *(v4d_u *)(void *)p = v;
}

NS_INLINE v4d splat(double x)
{
    return (v4d){x, x, x, x};
}

/* Lane by lane: where m is all ones, a, else b. */
NS_INLINE v4d select4(v4i m, v4d a, v4d b)
{
    return (v4d)(((v4i)a & m) | ((v4i)b & ~m));
}

/* ((v0 + v1) + v2) + v3 */
NS_INLINE double lanes_sum(v4d v)
{
    return ((v[0] + v[1]) + v[2]) + v[3];
}

/* sqrt of each lane (one vector instruction where the target has it; -fno-math-errno). */
NS_INLINE v4d sqrt4(v4d x)
{
    v4d r;
    for (int l = 0; l < 4; l++)
        r[l] = sqrt(x[l]);
    return r;
}

#endif
