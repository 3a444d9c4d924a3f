/* ns_train_model_impl: the body of ns_train_model.c, written once for a real type R and compiled
 * twice: float (the trainer, sgemm) and double (the gradient checks, dgemm). Included only by
 * ns_train_model.c, which defines R, NS_TRAIN_MODEL_F32 (1 for float), GEMM, EXP and FN(name) (the
 * name with the type's suffix). The float forward repeats the inference forward (ns_gpt2_forward.c)
 * operation for operation, so the logits, weights and values of a trained model are the ones
 * training saw. */

/* Rows of the output layer's logits held at once (CHUNK x V floats). */
#define NS_TRAIN_MODEL_CHUNK 64

struct FN(ns_train_model_work) {
    size_t T_max, T, C, H, F, V, NL;  /* T: tokens of the last step */
    R *block;                         /* the one allocation; every buffer points into it */
    R *encoded;                       /* (T, C)      token + position embedding */
    R *ln1, *ln1_mean, *ln1_rstd;     /* (NL, T, C), (NL, T), (NL, T) */
    R *qkv;                           /* (NL, T, 3C) q | k | v */
    R *att;                           /* (NL, H, T, T) attention weights */
    R *atty;                          /* (NL, T, C)  attention output, heads concatenated */
    R *res2;                          /* (NL, T, C)  residual after attention */
    R *ln2, *ln2_mean, *ln2_rstd;     /* (NL, T, C), (NL, T), (NL, T) */
    R *fch, *fcg;                     /* (NL, T, F)  MLP pre-activation, GELU output */
    R *res3;                          /* (NL, T, C)  residual after the MLP (layer output) */
    R *lnf, *lnf_mean, *lnf_rstd;     /* (T, C), (T), (T) */
    R *z;                             /* (T, T)      one head's logits q k^T / sqrt(D) */
    R *lg;                            /* (CHUNK, V)  output logits of a chunk of rows */
    R *dx, *dln, *dqkv, *datty;       /* backward: (T, C), (T, C), (T, 3C), (T, C) */
    R *dfc, *datt, *dz, *dlnf;        /* (T, F), (T, T), (T, T), (T, C) */
    double *dwork;                    /* attention rows in double: NS_GPT2_ATTN_WORK(T) */
};

/* ---- the work area ---- */

static int FN(tm_work_new)(const ns_train_params_layout *lay, size_t T_max,
                           FN(ns_train_model_work) **out, ns_err *err)
{
    *out = NULL;
    const ns_gpt2_config *c = &lay->cfg;
    if (T_max == 0 || T_max > c->n_ctx)
        return ns_fail(err, NS_ERR_INVALID, "trainer: sequence length %zu outside 1..n_ctx = %zu",
                       T_max, c->n_ctx);
    size_t T = T_max, C = c->n_embd, H = c->n_head, F = c->n_inner, V = c->vocab_size;
    size_t NL = c->n_layer, TT = T * T;
    size_t n[] = {T * C, /* encoded */
                  NL * T * C,
                  NL * T,
                  NL * T, /* ln1 */
                  NL * T * 3 * C,
                  NL * H * TT,
                  NL * T * C,
                  NL * T * C, /* qkv att atty res2 */
                  NL * T * C,
                  NL * T,
                  NL * T, /* ln2 */
                  NL * T * F,
                  NL * T * F,
                  NL * T * C, /* fch fcg res3 */
                  T * C,
                  T,
                  T,
                  TT,
                  NS_TRAIN_MODEL_CHUNK * V, /* lnf z lg */
                  T * C,
                  T * C,
                  T * 3 * C,
                  T * C,
                  T * F,
                  TT,
                  TT,
                  T * C};
    FN(ns_train_model_work) *w = calloc(1, sizeof *w);
    if (!w)
        return ns_fail(err, NS_ERR_NOMEM, "trainer: out of memory");
    R **dst[] = {&w->encoded, &w->ln1, &w->ln1_mean, &w->ln1_rstd, &w->qkv, &w->att, &w->atty,
                 &w->res2, &w->ln2, &w->ln2_mean, &w->ln2_rstd, &w->fch, &w->fcg, &w->res3,
                 &w->lnf, &w->lnf_mean, &w->lnf_rstd, &w->z, &w->lg, &w->dx, &w->dln, &w->dqkv,
                 &w->datty, &w->dfc, &w->datt, &w->dz, &w->dlnf};
    size_t nb = sizeof n / sizeof n[0], total = 0;
    double bytes = 0;
    for (size_t i = 0; i < nb; i++) {
        n[i] = (n[i] + 15) / 16 * 16; /* 64-byte aligned buffers */
        total += n[i];
        bytes += (double)n[i] * sizeof(R);
    }
    size_t dwork = NS_GPT2_ATTN_WORK(T) + 4 * T;
    bytes += (double)dwork * sizeof(double);
    void *block = NULL;
    if (bytes > 0.5 * (double)SIZE_MAX ||
        posix_memalign(&block, 64, total * sizeof(R) + dwork * sizeof(double)) != 0) {
        free(w);
        return ns_fail(err, NS_ERR_NOMEM, "trainer: cannot allocate %.0f MiB of activations for "
                       "%zu tokens", bytes / 1048576.0, T_max);
    }
    memset(block, 0, total * sizeof(R) + dwork * sizeof(double));
    w->block = block;
    R *q = w->block;
    for (size_t i = 0; i < nb; i++) {
        *dst[i] = q;
        q += n[i];
    }
    w->dwork = (double *)(void *)q;
    w->T_max = T_max;
    w->C = C, w->H = H, w->F = F, w->V = V, w->NL = NL;
    *out = w;
    return NS_OK;
}

static void FN(tm_work_free)(FN(ns_train_model_work) *w)
{
    if (!w)
        return;
    free(w->block);
    free(w);
}

static const R *FN(tm_attn)(const FN(ns_train_model_work) *w, size_t layer)
{
    return w->att + layer * w->H * w->T * w->T;
}

/* ---- kernels (outputs first) ---- */

/* c (M, N; ldc) = alpha op(a) op(b) + beta c, row-major; op transposes when ta / tb. */
static void FN(mm)(R *c, size_t ldc, const R *a, size_t lda, int ta, const R *b, size_t ldb, int tb,
                   size_t M, size_t N, size_t K, R alpha, R beta)
{
    GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M,
         (int)N, (int)K, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

/* out = (x - mean) / sqrt(var + eps) * w + b per row, as the inference forward computes it (mean
 * and variance in double, then in R); mean and rstd kept for the backward. */
static void FN(layernorm)(R *out, R *mean, R *rstd, const R *x, const R *w, const R *b, size_t T,
                          size_t C, double eps)
{
    for (size_t t = 0; t < T; t++) {
        const R *xt = x + t * C;
        double sum = 0.0, ss = 0.0;
        for (size_t c = 0; c < C; c++)
            sum += xt[c];
        double mu = sum / (double)C;
        for (size_t c = 0; c < C; c++) {
            double d = xt[c] - mu;
            ss += d * d;
        }
        R rs = (R)(1.0 / sqrt(ss / (double)C + eps)), m = (R)mu;
        R *o = out + t * C;
        for (size_t c = 0; c < C; c++)
            o[c] = (xt[c] - m) * rs * w[c] + b[c];
        mean[t] = m;
        rstd[t] = rs;
    }
}

/* dx += d/dx, dw += d/dw, db += d/db of LayerNorm given dout (mean and rstd of the forward). */
static void FN(layernorm_back)(R *dx, R *dw, R *db, const R *dout, const R *x, const R *w,
                               const R *mean, const R *rstd, size_t T, size_t C)
{
    for (size_t t = 0; t < T; t++) {
        const R *xt = x + t * C, *dt = dout + t * C;
        R m = mean[t], rs = rstd[t];
        double a = 0.0, b = 0.0;
        for (size_t c = 0; c < C; c++) {
            double nrm = (double)((xt[c] - m) * rs), dn = (double)dt[c] * w[c];
            a += dn;
            b += dn * nrm;
        }
        a /= (double)C;
        b /= (double)C;
        R *dxt = dx + t * C;
        for (size_t c = 0; c < C; c++) {
            R nrm = (xt[c] - m) * rs;
            double dn = (double)dt[c] * w[c];
            dxt[c] += (R)((dn - a - (double)nrm * b) * rs);
            dw[c] += dt[c] * nrm;
            db[c] += dt[c];
        }
    }
}

/* Every row of out (rows x cols) set to bias. */
static void FN(rows_set)(R *out, const R *bias, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(out + r * cols, bias, cols * sizeof(R));
}

static void FN(rows_add)(R *out, const R *bias, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            out[r * cols + c] += bias[c];
}

/* db += the column sums of dy (rows x cols), each in double. */
static void FN(colsum_add)(R *db, const R *dy, size_t rows, size_t cols)
{
    for (size_t c = 0; c < cols; c++) {
        double s = 0.0;
        for (size_t r = 0; r < rows; r++)
            s += dy[r * cols + c];
        db[c] += (R)s;
    }
}

/* GELU (tanh form, "gelu_new") as the inference forward evaluates it: x / (1 + exp(-2u)),
 * u = sqrt(2/pi) (x + 0.044715 x^3). */
static void FN(gelu)(R *y, const R *x, size_t n)
{
    const R s2 = (R)2 * (R)0.7978845608028654;
    for (size_t i = 0; i < n; i++) {
        R v = x[i];
        y[i] = v / ((R)1 + EXP(-s2 * (v + (R)0.044715 * v * v * v)));
    }
}

/* d *= GELU'(x): with s = sigmoid(2u), GELU = x s and GELU' = s + 2 x s (1 - s) u'(x). */
static void FN(gelu_back)(R *d, const R *x, size_t n)
{
    const double k = 0.7978845608028654;
    for (size_t i = 0; i < n; i++) {
        double v = x[i], u = k * (v + 0.044715 * v * v * v);
        double s = 1.0 / (1.0 + exp(-2.0 * u));
        d[i] = (R)((double)d[i] * (s + 2.0 * v * s * (1.0 - s) * k * (1.0 + 3.0 * 0.044715 * v * v)));
    }
}

/* ---- attention ---- */

/* One head's weights from its logits: the model's normalizer at its temperature, per causal row
 * (for softmax1 and sigmoid the weights a, which need not sum to 1). */
static int FN(attn_weights)(R *a, const R *z, size_t T, const ns_gpt2_config *cfg, double *work,
                            ns_err *err)
{
#if NS_TRAIN_MODEL_F32
    return ns_gpt2_attn_weights(a, z, T, cfg, work, err);
#else
    double Ta = ns_gpt2_attn_temperature(cfg);
    for (size_t m = 0; m < T; m++) {
        NS_TRY(ns_norm_weights(&cfg->attn_norm, z + m * T, m + 1, Ta, a + m * T, work, err));
        memset(a + m * T + m + 1, 0, (T - m - 1) * sizeof(R));
    }
    return NS_OK;
#endif
}

/* dz = the normalizer's backward of each causal row (ns_norm_jac_vjp_weights, in double, from
 * the row's weights: softmax1 (diag(a) - a a^T) / T, sigmoid diag(a (1 - a)) / T, the simplex
 * ones' own), 0 above it. */
static void FN(attn_rows_back)(R *dz, const R *a, const R *g, size_t T, const ns_gpt2_config *cfg,
                               double *work)
{
    double Ta = ns_gpt2_attn_temperature(cfg);
    double *ad = work, *gd = work + T, *od = work + 2 * T, *scratch = work + 3 * T;
    for (size_t m = 0; m < T; m++) {
        size_t n = m + 1;
        for (size_t i = 0; i < n; i++) {
            ad[i] = a[m * T + i];
            gd[i] = g[m * T + i];
        }
        ns_norm_jac_vjp_weights(&cfg->attn_norm, ad, gd, n, Ta, od, scratch);
        for (size_t i = 0; i < T; i++)
            dz[m * T + i] = i < n ? (R)od[i] : (R)0;
    }
}

/* atty = softmax-style attention of every head over qkv; att receives the weights. */
static int FN(attention)(FN(ns_train_model_work) *w, R *atty, R *att, const R *qkv, size_t T,
                         const ns_gpt2_config *cfg, ns_err *err)
{
    size_t C = w->C, H = w->H, D = C / H, C3 = 3 * C;
    const R scale = (R)(1.0 / sqrt((double)D));
    for (size_t h = 0; h < H; h++) {
        const R *q = qkv + h * D, *k = qkv + C + h * D, *v = qkv + 2 * C + h * D;
        R *a = att + h * T * T;
        FN(mm)(w->z, T, q, C3, 0, k, C3, 1, T, T, D, scale, (R)0); /* z = q k^T / sqrt(D) */
        NS_TRY(FN(attn_weights)(a, w->z, T, cfg, w->dwork, err));
        FN(mm)(atty + h * D, C, a, T, 0, v, C3, 0, T, D, T, (R)1, (R)0);
    }
    return NS_OK;
}

/* dqkv = the attention's backward from datty (every head). */
static void FN(attention_back)(FN(ns_train_model_work) *w, R *dqkv, const R *datty, const R *att,
                               const R *qkv, size_t T, const ns_gpt2_config *cfg)
{
    size_t C = w->C, H = w->H, D = C / H, C3 = 3 * C;
    const R scale = (R)(1.0 / sqrt((double)D));
    for (size_t h = 0; h < H; h++) {
        const R *q = qkv + h * D, *k = qkv + C + h * D, *v = qkv + 2 * C + h * D;
        const R *a = att + h * T * T, *dy = datty + h * D;
        FN(mm)(w->datt, T, dy, C, 0, v, C3, 1, T, T, D, (R)1, (R)0);           /* d weights */
        FN(mm)(dqkv + 2 * C + h * D, C3, a, T, 1, dy, C, 0, T, D, T, (R)1, (R)0); /* dv */
        FN(attn_rows_back)(w->dz, a, w->datt, T, cfg, w->dwork);               /* d logits */
        FN(mm)(dqkv + h * D, C3, w->dz, T, 0, k, C3, 0, T, D, T, scale, (R)0);   /* dq */
        FN(mm)(dqkv + C + h * D, C3, w->dz, T, 1, q, C3, 0, T, D, T, scale, (R)0); /* dk */
    }
}

/* ---- the pass ---- */

#define NS_TRAIN_MODEL_P(i) (params + lay->t[(i)].offset)
#define NS_TRAIN_MODEL_G(i) (grads + lay->t[(i)].offset)

/* Layer l's activations in w (the residual stream enters as x). */
static int FN(layer_forward)(const ns_train_params_layout *lay, const R *params,
                             FN(ns_train_model_work) *w, size_t l, const R *x, size_t T,
                             ns_err *err)
{
    const ns_gpt2_config *cfg = &lay->cfg;
    size_t C = w->C, F = w->F, TC = T * C;
    R *ln1 = w->ln1 + l * TC, *qkv = w->qkv + l * 3 * TC, *atty = w->atty + l * TC;
    R *res2 = w->res2 + l * TC, *ln2 = w->ln2 + l * TC, *res3 = w->res3 + l * TC;
    R *fch = w->fch + l * T * F, *fcg = w->fcg + l * T * F;
    R *att = w->att + l * w->H * T * T;
    FN(layernorm)(ln1, w->ln1_mean + l * T, w->ln1_rstd + l * T, x,
                  NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_LN1_W)),
                  NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_LN1_B)), T, C, cfg->ln_eps);
    FN(rows_set)(qkv, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_QKV_B)), T, 3 * C);
    FN(mm)(qkv, 3 * C, ln1, C, 0, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_QKV_W)), 3 * C,
           0, T, 3 * C, C, (R)1, (R)1);
    NS_TRY(FN(attention)(w, atty, att, qkv, T, cfg, err));
    memcpy(res2, x, TC * sizeof(R));
    FN(mm)(res2, C, atty, C, 0, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_AP_W)), C, 0, T,
           C, C, (R)1, (R)1);
    FN(rows_add)(res2, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_AP_B)), T, C);
    FN(layernorm)(ln2, w->ln2_mean + l * T, w->ln2_rstd + l * T, res2,
                  NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_LN2_W)),
                  NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_LN2_B)), T, C, cfg->ln_eps);
    FN(rows_set)(fch, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_FC_B)), T, F);
    FN(mm)(fch, F, ln2, C, 0, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_FC_W)), F, 0, T, F,
           C, (R)1, (R)1);
    FN(gelu)(fcg, fch, T * F);
    memcpy(res3, res2, TC * sizeof(R));
    FN(mm)(res3, C, fcg, F, 0, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_FP_W)), C, 0, T,
           C, F, (R)1, (R)1);
    FN(rows_add)(res3, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_FP_B)), T, C);
    return NS_OK;
}

/* Layer l's backward: w->dx holds d loss / d (layer output) and receives d loss / d (its input). */
static void FN(layer_backward)(const ns_train_params_layout *lay, const R *params, R *grads,
                               FN(ns_train_model_work) *w, size_t l, const R *x, size_t T)
{
    const ns_gpt2_config *cfg = &lay->cfg;
    size_t C = w->C, F = w->F, TC = T * C;
    const R *ln1 = w->ln1 + l * TC, *qkv = w->qkv + l * 3 * TC, *atty = w->atty + l * TC;
    const R *res2 = w->res2 + l * TC, *ln2 = w->ln2 + l * TC;
    const R *fch = w->fch + l * T * F, *fcg = w->fcg + l * T * F, *att = w->att + l * w->H * T * T;
    R *dx = w->dx, *dfc = w->dfc, *dln = w->dln;
    /* res3 = res2 + gelu(ln2 Wfc + bfc) Wfp + bfp: dx flows on to res2 unchanged */
    FN(mm)(dfc, F, dx, C, 0, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_FP_W)), C, 1, T, F,
           C, (R)1, (R)0);
    FN(mm)(NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_FP_W)), C, fcg, F, 1, dx, C, 0, F, C,
           T, (R)1, (R)1);
    FN(colsum_add)(NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_FP_B)), dx, T, C);
    FN(gelu_back)(dfc, fch, T * F);
    FN(mm)(dln, C, dfc, F, 0, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_FC_W)), F, 1, T, C,
           F, (R)1, (R)0);
    FN(mm)(NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_FC_W)), F, ln2, C, 1, dfc, F, 0, C, F,
           T, (R)1, (R)1);
    FN(colsum_add)(NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_FC_B)), dfc, T, F);
    FN(layernorm_back)(dx, NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_LN2_W)),
                       NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_LN2_B)), dln, res2,
                       NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_LN2_W)),
                       w->ln2_mean + l * T, w->ln2_rstd + l * T, T, C);
    /* res2 = x + attention(ln1 Wqkv + bqkv) Wap + bap: dx flows on to x unchanged */
    FN(mm)(w->datty, C, dx, C, 0, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_AP_W)), C, 1,
           T, C, C, (R)1, (R)0);
    FN(mm)(NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_AP_W)), C, atty, C, 1, dx, C, 0, C, C,
           T, (R)1, (R)1);
    FN(colsum_add)(NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_AP_B)), dx, T, C);
    FN(attention_back)(w, w->dqkv, w->datty, att, qkv, T, cfg);
    FN(mm)(dln, C, w->dqkv, 3 * C, 0, NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_QKV_W)),
           3 * C, 1, T, C, 3 * C, (R)1, (R)0);
    FN(mm)(NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_QKV_W)), 3 * C, ln1, C, 1, w->dqkv,
           3 * C, 0, C, 3 * C, T, (R)1, (R)1);
    FN(colsum_add)(NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_QKV_B)), w->dqkv, T, 3 * C);
    FN(layernorm_back)(dx, NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_LN1_W)),
                       NS_TRAIN_MODEL_G(ns_train_params_index(l, NS_TRAIN_LN1_B)), dln, x,
                       NS_TRAIN_MODEL_P(ns_train_params_index(l, NS_TRAIN_LN1_W)),
                       w->ln1_mean + l * T, w->ln1_rstd + l * T, T, C);
}

/* The output layer (logits = lnf wte^T) and the loss, a chunk of rows at a time; with grads also
 * its backward: dlnf, and wte's gradient from the output layer. */
static double FN(output_layer)(const ns_train_params_layout *lay, const R *params, R *grads,
                               FN(ns_train_model_work) *w, const int32_t *tg, size_t T)
{
    size_t C = w->C, V = w->V;
    const R *wte = NS_TRAIN_MODEL_P(NS_TRAIN_WTE);
    double loss = 0.0;
    for (size_t r0 = 0; r0 < T; r0 += NS_TRAIN_MODEL_CHUNK) {
        size_t rows = T - r0 < NS_TRAIN_MODEL_CHUNK ? T - r0 : NS_TRAIN_MODEL_CHUNK;
        FN(mm)(w->lg, V, w->lnf + r0 * C, C, 0, wte, C, 1, rows, V, C, (R)1, (R)0);
        for (size_t r = 0; r < rows; r++) {
            R *lr = w->lg + r * V, mx = lr[0];
            for (size_t i = 1; i < V; i++)
                mx = lr[i] > mx ? lr[i] : mx;
            R target = lr[tg[r0 + r]];
            double sum = 0.0;
            for (size_t i = 0; i < V; i++) {
                lr[i] = EXP(lr[i] - mx);
                sum += lr[i];
            }
            loss += log(sum) - (double)(target - mx);
            if (!grads)
                continue;
            R inv = (R)(1.0 / sum);
            for (size_t i = 0; i < V; i++)
                lr[i] *= inv;   /* d loss / d logits = p - onehot(target) */
            lr[tg[r0 + r]] -= (R)1;
        }
        if (!grads)
            continue;
        FN(mm)(w->dlnf + r0 * C, C, w->lg, V, 0, wte, C, 0, rows, C, V, (R)1, (R)0);
        FN(mm)(NS_TRAIN_MODEL_G(NS_TRAIN_WTE), C, w->lg, V, 1, w->lnf + r0 * C, C, 0, V, C, rows,
               (R)1, (R)1);
    }
    return loss;
}

static int FN(check_tokens)(const FN(ns_train_model_work) *w, const int32_t *in, const int32_t *tg,
                            size_t T, ns_err *err)
{
    if (T == 0 || T > w->T_max)
        return ns_fail(err, NS_ERR_INVALID, "trainer: %zu tokens, the work area holds 1..%zu", T,
                       w->T_max);
    for (size_t t = 0; t < T; t++)
        if (in[t] < 0 || (size_t)in[t] >= w->V || tg[t] < 0 || (size_t)tg[t] >= w->V)
            return ns_fail(err, NS_ERR_INVALID, "trainer: token id at position %zu is outside the "
                           "vocabulary (size %zu)", t, w->V);
    return NS_OK;
}

static int FN(tm_step)(const ns_train_params_layout *lay, const R *params, R *grads,
                       FN(ns_train_model_work) *w, const int32_t *in, const int32_t *tg, size_t T,
                       double *loss_sum, ns_err *err)
{
    NS_TRY(FN(check_tokens)(w, in, tg, T, err));
    size_t C = w->C, NL = w->NL, TC = T * C;
    const R *wte = NS_TRAIN_MODEL_P(NS_TRAIN_WTE), *wpe = NS_TRAIN_MODEL_P(NS_TRAIN_WPE);
    w->T = T;
    for (size_t t = 0; t < T; t++)
        for (size_t c = 0; c < C; c++)
            w->encoded[t * C + c] = wte[(size_t)in[t] * C + c] + wpe[t * C + c];
    for (size_t l = 0; l < NL; l++)
        NS_TRY(FN(layer_forward)(lay, params, w, l, l ? w->res3 + (l - 1) * TC : w->encoded, T, err));
    const R *xL = w->res3 + (NL - 1) * TC;
    FN(layernorm)(w->lnf, w->lnf_mean, w->lnf_rstd, xL, NS_TRAIN_MODEL_P(NS_TRAIN_LNF_W),
                  NS_TRAIN_MODEL_P(NS_TRAIN_LNF_B), T, C, lay->cfg.ln_eps);
    if (grads)
        memset(grads, 0, lay->total * sizeof(R));
    *loss_sum = FN(output_layer)(lay, params, grads, w, tg, T);
    if (!grads)
        return NS_OK;
    memset(w->dx, 0, TC * sizeof(R));
    FN(layernorm_back)(w->dx, NS_TRAIN_MODEL_G(NS_TRAIN_LNF_W), NS_TRAIN_MODEL_G(NS_TRAIN_LNF_B),
                       w->dlnf, xL, NS_TRAIN_MODEL_P(NS_TRAIN_LNF_W), w->lnf_mean, w->lnf_rstd, T,
                       C);
    for (size_t l = NL; l-- > 0;)
        FN(layer_backward)(lay, params, grads, w, l, l ? w->res3 + (l - 1) * TC : w->encoded, T);
    R *dwte = NS_TRAIN_MODEL_G(NS_TRAIN_WTE), *dwpe = NS_TRAIN_MODEL_G(NS_TRAIN_WPE);
    for (size_t t = 0; t < T; t++)
        for (size_t c = 0; c < C; c++) {
            dwte[(size_t)in[t] * C + c] += w->dx[t * C + c];
            dwpe[t * C + c] += w->dx[t * C + c];
        }
    return NS_OK;
}

#undef NS_TRAIN_MODEL_P
#undef NS_TRAIN_MODEL_G
#undef NS_TRAIN_MODEL_CHUNK
