/* ns_blas: what normsweep needs from its CBLAS beyond the CBLAS interface -- its identity (recorded
 * in every output and archive) and one thread per rank -- for whichever CBLAS configure chose
 * (--with-blas=openblas|blis|cblas). Library-specific calls (openblas_get_config,
 * openblas_set_num_threads, bli_thread_set_num_threads, ...) are made only when configure found
 * them; nothing else in normsweep calls them. */
#ifndef NS_BLAS_H
#define NS_BLAS_H

#include <stddef.h>

/* Enough for any identity (OpenBLAS's configuration string is under 200 characters, a path
 * at most PATH_MAX). */
#define NS_BLAS_ID_MAX 4200

/* The CBLAS in use, into buf (NS_BLAS_ID_MAX bytes is always enough; truncated to len):
 *   OpenBLAS  openblas_get_config(), e.g. "OpenBLAS 0.3.21 NO_AFFINITY ... MAX_THREADS=64";
 *   BLIS      "BLIS 0.9.0 (/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4)": the version and
 *             the library file, as for other CBLAS:
 *   other     "cblas (/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0)": the shared object
 *             cblas_sgemm was found in at run time (dladdr, links resolved): what Debian's BLAS
 *             alternatives or LD_LIBRARY_PATH actually chose; "cblas (static)" when linked in. */
void ns_blas_identity(char *buf, size_t len);

/* One BLAS thread per rank (the ranks fill the cores; also what makes results independent of
 * the thread count), unless the user set the library's own variable (OPENBLAS_NUM_THREADS,
 * BLIS_NUM_THREADS). For a CBLAS without a known thread control nothing is done: set its own
 * variable (OMP_NUM_THREADS, MKL_NUM_THREADS) to 1. */
void ns_blas_single_thread(void);

/* The environment variable ns_blas_single_thread() respects ("OPENBLAS_NUM_THREADS",
 * "BLIS_NUM_THREADS"), or NULL when there is no thread control for this CBLAS. */
const char *ns_blas_thread_variable(void);

/* The number of threads the BLAS will use, or -1 when the library does not say. */
int ns_blas_threads(void);

/* This machine's sgemm rate now, in GFLOP/s, with the threads the BLAS has (best of 4 products of
 * 384 x 192 x 384 after one warm-up, ~10 ms): for time estimates, never for a result. 0 when the
 * buffers cannot be had. */
double ns_blas_sgemm_gflops(void);

#endif
