/* fuzz_safetensors: ns_st_parse (the validation behind ns_st_open) on arbitrary bytes: length
 * prefix, JSON header and tensor table. On success every tensor must lie inside the data section
 * with nbytes == numel * dtype size; the float tensors' bytes are converted to touch them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ns_fuzz.h"
#include "model/ns_safetensors.h"

/* Convert at most this many elements per tensor (reads its first and last bytes either way). */
#define FUZZ_ST_CONVERT_MAX 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_st_file f;
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_st_parse("fuzz.safetensors", data, size, &f, &err);
    if (rc != NS_OK) {
        ns_fuzz_check_err(rc, &err);
        NS_FUZZ_CHECK(rc == NS_ERR_FORMAT || rc == NS_ERR_NOMEM, "unexpected status %d: %s", rc,
                      err.msg);
        NS_FUZZ_CHECK(f.n_tensors == 0 && f.tensors == NULL, "failed parse left %zu tensors",
                      f.n_tensors);
        ns_st_close(&f); /* documented as unnecessary, but must be harmless */
        return 0;
    }
    NS_FUZZ_CHECK(f.data_start >= 8 && f.data_start <= size, "data_start %zu of %zu", f.data_start,
                  size);
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < f.n_tensors; i++) {
        const ns_st_tensor *t = &f.tensors[i];
        NS_FUZZ_CHECK(t->name != NULL, "tensor %zu has no name", i);
        NS_FUZZ_CHECK((unsigned)t->dtype < NS_ST_DTYPE_COUNT, "tensor %zu dtype %d", i, (int)t->dtype);
        NS_FUZZ_CHECK(t->ndim <= NS_ST_MAX_DIMS, "tensor %zu ndim %zu", i, t->ndim);
        size_t numel = 1;
        for (size_t d = 0; d < t->ndim; d++)
            numel *= t->shape[d];
        NS_FUZZ_CHECK(numel == t->numel, "tensor %s numel %zu != product %zu", t->name, t->numel, numel);
        NS_FUZZ_CHECK(t->nbytes == t->numel * ns_st_dtype_size(t->dtype), "tensor %s nbytes %zu",
                      t->name, t->nbytes);
        NS_FUZZ_CHECK(t->offset >= f.data_start && t->offset <= size && t->nbytes <= size - t->offset,
                      "tensor %s [%zu, +%zu) outside the %zu-byte input", t->name, t->offset,
                      t->nbytes, size);
        NS_FUZZ_CHECK(ns_st_find(&f, t->name) == t, "ns_st_find(\"%s\") is not tensor %zu", t->name, i);
        if (t->nbytes) {
            sink ^= data[t->offset];
            sink ^= data[t->offset + t->nbytes - 1];
        }
        if (t->dtype == NS_ST_F32 || t->dtype == NS_ST_F16 || t->dtype == NS_ST_BF16) {
            size_t n = t->numel < FUZZ_ST_CONVERT_MAX ? t->numel : FUZZ_ST_CONVERT_MAX;
            float out[FUZZ_ST_CONVERT_MAX];
            rc = ns_st_to_f32(out, data + t->offset, t->dtype, n, &err);
            NS_FUZZ_CHECK(rc == NS_OK, "ns_st_to_f32 on %s: %s", t->name, err.msg);
        }
    }
    (void)sink;
    ns_st_close(&f);
    return 0;
}
