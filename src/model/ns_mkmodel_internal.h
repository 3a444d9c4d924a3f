/* ns_mkmodel_internal: how mkmodel draws each weight, exposed for the tests that check a written
 * model element by element. Not for use by the program. */
#ifndef NS_MKMODEL_INTERNAL_H
#define NS_MKMODEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "model/ns_mkmodel.h"

/* Standard normal sample number `index` of stream `stream` for a seed: a pure function of its
 * arguments (SplitMix64 hashing + Box-Muller), so any chunking gives the same values. */
double ns_mkmodel_normal(uint64_t seed, uint64_t stream, uint64_t index);

/* The F32 value (before rounding to opts->dtype) of element `index` (row-major) of tensor `name`
 * (Hugging Face name without prefix), as ns_mkmodel_write writes it. NAN for an unknown name.
 * Weights: N(0, 0.02), c_proj weights N(0, 0.02 / sqrt(2 n_layer)); biases 0; LayerNorm weight 1,
 * bias 0; h.N.attn.bias the causal mask (1 on and below the diagonal). */
float ns_mkmodel_value(const ns_mkmodel_opts *opts, const char *name, size_t index);

#endif
