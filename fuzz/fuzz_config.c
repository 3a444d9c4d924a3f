/* fuzz_config: ns_model_config_read (every architecture) on arbitrary config.json bytes (written to a private temporary
 * directory: the loader reads from a directory only). On success the configuration must satisfy
 * what the forward pass relies on. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_fuzz.h"
#include "model/ns_model.h"

/* The temporary directory, made once per process and removed at exit. */
static char fuzz_dir[4096];
static char fuzz_path[4200];

static void fuzz_dir_remove(void)
{
    if (fuzz_path[0])
        unlink(fuzz_path);
    if (fuzz_dir[0])
        rmdir(fuzz_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(fuzz_dir, sizeof fuzz_dir, "%s/ns-fuzz-config.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(fuzz_dir)) {
        fprintf(stderr, "fuzz_config: mkdtemp %s: %s\n", fuzz_dir, strerror(errno));
        exit(1);
    }
    snprintf(fuzz_path, sizeof fuzz_path, "%s/config.json", fuzz_dir);
    atexit(fuzz_dir_remove);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *fp = fopen(fuzz_path, "wb");
    if (!fp || (size && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0) {
        fprintf(stderr, "fuzz_config: cannot write %s: %s\n", fuzz_path, strerror(errno));
        abort(); /* not a finding in the code under test, but nothing can be tested */
    }
    ns_model_config cfg;
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_model_config_read(fuzz_dir, &cfg, &err);
    if (rc != NS_OK) {
        ns_fuzz_check_err(rc, &err);
        NS_FUZZ_CHECK(rc == NS_ERR_FORMAT || rc == NS_ERR_INVALID || rc == NS_ERR_NOMEM,
                      "unexpected status %d: %s", rc, err.msg);
        NS_FUZZ_CHECK(strstr(err.msg, "config.json") != NULL, "message does not name the file: %s",
                      err.msg);
        return 0;
    }
    NS_FUZZ_CHECK(cfg.n_layer > 0 && cfg.n_head > 0 && cfg.n_embd > 0 && cfg.n_ctx > 0 &&
                      cfg.vocab_size > 0 && cfg.n_inner > 0 && cfg.d_head > 0 && cfg.n_kv_head > 0,
                  "zero size accepted (layer %zu head %zu embd %zu ctx %zu vocab %zu inner %zu "
                  "head_dim %zu kv %zu)", cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.n_ctx,
                  cfg.vocab_size, cfg.n_inner, cfg.d_head, cfg.n_kv_head);
    NS_FUZZ_CHECK(cfg.n_head % cfg.n_kv_head == 0, "%zu heads not a multiple of %zu key/value "
                  "heads", cfg.n_head, cfg.n_kv_head);
    NS_FUZZ_CHECK(cfg.arch != NS_ARCH_GPT2 || cfg.n_embd == cfg.n_head * cfg.d_head,
                  "GPT-2 n_embd %zu != heads %zu x head_dim %zu", cfg.n_embd, cfg.n_head, cfg.d_head);
    NS_FUZZ_CHECK(cfg.rotary_dim % 2 == 0 && cfg.rotary_dim <= cfg.d_head &&
                      (cfg.arch == NS_ARCH_GPT2) == (cfg.rotary_dim == 0),
                  "rotary_dim %zu of head_dim %zu accepted", cfg.rotary_dim, cfg.d_head);
    NS_FUZZ_CHECK(!cfg.rotary_dim || (cfg.rope_theta > 0 && cfg.rope_theta < 1e300),
                  "rope_theta %g accepted", cfg.rope_theta);
    NS_FUZZ_CHECK(cfg.norm_eps > 0 && cfg.norm_eps <= 1, "norm epsilon %g accepted", cfg.norm_eps);
    return 0;
}
