/* bench_tokenize: median wall time of encoding one text file with a tokenizer (GPT-2's files or
 * a tokenizer.json; the load is timed separately and excluded).
 * Usage: bench_tokenize TOKENIZER FILE [RUNS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ns_bench.h"

#include "common/ns_file.h"
#include "tokenizer/ns_tokenizer.h"

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: bench_tokenize TOKENIZER FILE [RUNS]\n");
        return 2;
    }
    int runs = argc == 4 ? atoi(argv[3]) : 5;
    if (runs < 1 || runs > 100) {
        fprintf(stderr, "bench_tokenize: RUNS must be 1..100\n");
        return 2;
    }
    ns_err err;
    ns_tokenizer *tok = NULL;
    ns_mmap map = {0};
    map.fd = -1;
    double *t = calloc((size_t)runs, sizeof *t);
    size_t n_tokens = 0;
    int rc = NS_ERR_NOMEM;
    ns_fail(&err, rc, "out of memory");
    if (!t)
        goto done;
    double t0 = ns_bench_now();
    if ((rc = ns_tokenizer_load(argv[1], &tok, &err)) != NS_OK)
        goto done;
    double load = ns_bench_now() - t0;
    if ((rc = ns_mmap_open(argv[2], &map, &err)) != NS_OK)
        goto done;
    for (int r = 0; r < runs; r++) {
        ns_tokens ids = {0};
        t0 = ns_bench_now();
        rc = ns_tokenizer_encode(tok, (const char *)map.data, map.size, &ids, &err);
        t[r] = ns_bench_now() - t0;
        n_tokens = ids.n;
        ns_tokens_free(&ids);
        if (rc != NS_OK)
            goto done;
    }
    qsort(t, (size_t)runs, sizeof *t, ns_bench_cmp_double);
    printf("tokenize_load_seconds: %.4f\n", load);
    printf("tokenize_wap_seconds: %.4f\n", t[runs / 2]);
    printf("tokenize_wap_tokens: %zu\n", n_tokens);
    printf("tokenize_wap_mb_per_second: %.1f\n", (double)map.size / 1e6 / t[runs / 2]);
done:
    if (rc != NS_OK)
        fprintf(stderr, "bench_tokenize: %s\n", err.msg);
    free(t);
    ns_mmap_close(&map);
    ns_tokenizer_free(tok);
    return rc == NS_OK ? 0 : 1;
}
