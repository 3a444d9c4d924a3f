/* ns_blas: the CBLAS's identity and thread count, through the library-specific calls configure
 * found (config.h: NS_BLAS_KIND, HAVE_OPENBLAS_*, HAVE_BLI_*, HAVE_DLADDR). */
#include "config.h"

#include "common/ns_blas.h"

#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef HAVE_DLADDR
#include <dlfcn.h>
#endif
#if defined(HAVE_BLIS_H) && (defined(HAVE_BLI_THREAD_SET_NUM_THREADS) || \
                             defined(HAVE_BLI_INFO_GET_VERSION_STR))
#include <blis.h>
#endif

#ifndef HAVE_OPENBLAS_GET_CONFIG
/* The file of the shared object that holds cblas_sgemm (symbolic links resolved: Debian's BLAS
 * alternatives are links), into buf; "static" when linked in or unknown. */
static void sgemm_object(char *buf, size_t len)
{
    snprintf(buf, len, "static");
#ifdef HAVE_DLADDR
    Dl_info info;
    char real[PATH_MAX];
    if (dladdr((void *)cblas_sgemm, &info) && info.dli_fname && info.dli_fname[0])
        snprintf(buf, len, "%s", realpath(info.dli_fname, real) ? real : info.dli_fname);
#endif
}
#endif

void ns_blas_identity(char *buf, size_t len)
{
#ifdef HAVE_OPENBLAS_GET_CONFIG
    snprintf(buf, len, "%s", openblas_get_config());
#else
    char so[PATH_MAX];
    sgemm_object(so, sizeof so);
#ifdef HAVE_BLI_INFO_GET_VERSION_STR
    snprintf(buf, len, "BLIS %s (%s)", bli_info_get_version_str(), so);
#else
    snprintf(buf, len, "%s (%s)", NS_BLAS_KIND, so);
#endif
#endif
}

const char *ns_blas_thread_variable(void)
{
#if defined(HAVE_OPENBLAS_SET_NUM_THREADS)
    return "OPENBLAS_NUM_THREADS";
#elif defined(HAVE_BLI_THREAD_SET_NUM_THREADS)
    return "BLIS_NUM_THREADS";
#else
    return NULL;
#endif
}

void ns_blas_single_thread(void)
{
    const char *var = ns_blas_thread_variable();
    if (!var || getenv(var))
        return;
#if defined(HAVE_OPENBLAS_SET_NUM_THREADS)
    openblas_set_num_threads(1);
#elif defined(HAVE_BLI_THREAD_SET_NUM_THREADS)
    bli_thread_set_num_threads(1);
#endif
}

int ns_blas_threads(void)
{
#if defined(HAVE_OPENBLAS_GET_NUM_THREADS)
    return openblas_get_num_threads();
#elif defined(HAVE_BLI_THREAD_GET_NUM_THREADS)
    return (int)bli_thread_get_num_threads();
#else
    return -1;
#endif
}

double ns_blas_sgemm_gflops(void)
{
    enum { M = 384, N = 384, K = 192, REPS = 4 };
    float *a = calloc((size_t)M * K, sizeof *a), *b = calloc((size_t)K * N, sizeof *b);
    float *c = calloc((size_t)M * N, sizeof *c);
    double best = 0.0;
    for (size_t i = 0; a && i < (size_t)M * K; i++)
        a[i] = (float)(i % 7) * 0.125f;
    for (size_t i = 0; b && i < (size_t)K * N; i++)
        b[i] = (float)(i % 5) * 0.25f;
    for (int r = 0; a && b && c && r <= REPS; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        double rate = 2.0 * M * N * K / (s > 0 ? s : 1e-9) * 1e-9;
        if (r > 0 && rate > best) /* round 0 warms up (buffers, code) */
            best = rate;
    }
    free(a);
    free(b);
    free(c);
    return best;
}
