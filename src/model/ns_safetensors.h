/* ns_safetensors: a validating reader of the safetensors format (memory-mapped), F16/BF16 <-> F32
 * conversion, and the header builder used by the writer in ns_mkmodel.
 *
 * File layout: u64 little-endian header length N, N bytes of JSON (an object mapping tensor names
 * to {"dtype", "shape", "data_offsets": [begin, end]}, plus an optional "__metadata__" object),
 * then the data section; offsets are relative to the start of the data section (8 + N). */
#ifndef NS_SAFETENSORS_H
#define NS_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "common/ns_file.h"

/* Largest number of dimensions accepted in a tensor's shape. */
#define NS_ST_MAX_DIMS 8

/* Every dtype of the safetensors specification is recognised (so byte sizes of buffers such as
 * a BOOL attention mask can be validated); only F32, F16 and BF16 can be read as floats. */
typedef enum ns_st_dtype {
    NS_ST_F32 = 0,
    NS_ST_F16,
    NS_ST_BF16,
    NS_ST_F64,
    NS_ST_I64,
    NS_ST_U64,
    NS_ST_I32,
    NS_ST_U32,
    NS_ST_I16,
    NS_ST_U16,
    NS_ST_I8,
    NS_ST_U8,
    NS_ST_BOOL,
    NS_ST_F8_E4M3,
    NS_ST_F8_E5M2,
    NS_ST_DTYPE_COUNT
} ns_st_dtype;

/* "F32", "F16", ... */
const char *ns_st_dtype_name(ns_st_dtype dtype);
/* Bytes per element. */
size_t ns_st_dtype_size(ns_st_dtype dtype);
/* Parse a dtype name; returns 0 and sets *dtype, or -1 for an unknown name. */
int ns_st_dtype_parse(const char *name, ns_st_dtype *dtype);

typedef struct ns_st_tensor {
    char *name;
    ns_st_dtype dtype;
    size_t ndim;
    size_t shape[NS_ST_MAX_DIMS];
    size_t numel;   /* product of shape (1 for a scalar) */
    size_t offset;  /* absolute byte offset of the data in the file */
    size_t nbytes;  /* numel * dtype size == end - begin */
} ns_st_tensor;

typedef struct ns_st_file {
    char *path;
    ns_mmap map;             /* whole file, read-only shared */
    size_t data_start;       /* 8 + header length */
    size_t n_tensors;
    ns_st_tensor *tensors;   /* in header order (jansson preserves it) */
} ns_st_file;

/* Map path and validate its header completely: header length within the file, JSON object,
 * known dtypes, shapes, data_offsets inside the data section, byte size == numel * dtype size,
 * no two tensors overlapping, duplicate names rejected. On failure (NS_ERR_IO for an unreadable
 * file, NS_ERR_FORMAT for anything malformed, message naming the file and the tensor) *f is left
 * empty and needs no close. On success the caller owns *f and calls ns_st_close. */
int ns_st_open(const char *path, ns_st_file *f, ns_err *err);

/* The same validation over a buffer already in memory (used by ns_st_open; path names it in
 * messages). data must outlive f; f->map stays empty. */
int ns_st_parse(const char *path, const uint8_t *data, size_t size, ns_st_file *f, ns_err *err);

/* Unmap and free; safe on a zeroed or already-closed file. */
void ns_st_close(ns_st_file *f);

/* The tensor called name, or NULL. */
const ns_st_tensor *ns_st_find(const ns_st_file *f, const char *name);

/* Pointer to a tensor's bytes inside the map (not necessarily aligned). */
static inline const uint8_t *ns_st_bytes(const ns_st_file *f, const ns_st_tensor *t)
{
    return f->map.data + t->offset;
}

/* Half-precision conversions. *_to_f32 are exact. ns_f32_to_f16/ns_f32_to_bf16 round to
 * nearest, ties to even (F16 overflows to infinity, underflows through subnormals to zero);
 * NaN stays NaN (quiet). */
float ns_f16_to_f32(uint16_t h);
float ns_bf16_to_f32(uint16_t h);
uint16_t ns_f32_to_f16(float f);
uint16_t ns_f32_to_bf16(float f);

/* Convert n elements of src (F32, F16 or BF16 little-endian bytes, any alignment) to out.
 * Returns NS_ERR_INVALID for another dtype. */
int ns_st_to_f32(float *out, const uint8_t *src, ns_st_dtype dtype, size_t n, ns_err *err);

/* Describing a tensor for ns_st_header_build. */
typedef struct ns_st_spec {
    const char *name;
    ns_st_dtype dtype;
    size_t ndim;
    size_t shape[NS_ST_MAX_DIMS];
} ns_st_spec;

/* Build the first 8 + N bytes of a safetensors file for tensors laid out back to back in the
 * given order (header padded with spaces so the data section starts 8-byte aligned).
 * *out (caller frees) holds the length prefix and the JSON; *out_len its size; *data_len the
 * size of the data section that must follow. metadata is NULL or a NULL-terminated list of
 * key, value string pairs written as "__metadata__". */
int ns_st_header_build(const ns_st_spec *specs, size_t n, const char *const *metadata,
                       uint8_t **out, size_t *out_len, size_t *data_len, ns_err *err);

#endif
