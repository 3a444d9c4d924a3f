/* ns_train_model: GPT-2 forward, loss and backward over one sequence, compiled from one body
 * (ns_train_model_impl.h) in float for the trainer and in double for the gradient checks. */
#include "train/ns_train_model.h"
#include "train/ns_train_model_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_jacobian.h"
#include "analysis/ns_normalize.h"
#include "model/ns_gpt2.h"

#define NS_TM_CAT_(a, b) a##b
#define NS_TM_CAT(a, b) NS_TM_CAT_(a, b)
#define FN(name) NS_TM_CAT(name, NS_TM_SUFFIX)

#define R float
#define NS_TM_F32 1
#define NS_TM_SUFFIX _f32
#define GEMM cblas_sgemm
#define EXP expf
#include "train/ns_train_model_impl.h"
#undef R
#undef NS_TM_F32
#undef NS_TM_SUFFIX
#undef GEMM
#undef EXP

#define R double
#define NS_TM_F32 0
#define NS_TM_SUFFIX _f64
#define GEMM cblas_dgemm
#define EXP exp
#include "train/ns_train_model_impl.h"
#undef R
#undef NS_TM_F32
#undef NS_TM_SUFFIX
#undef GEMM
#undef EXP
