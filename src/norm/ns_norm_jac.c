/* ns_norm_jac: the Jacobian da/dz of every normalizer, issue 36's off the simplex included: its
 * exact spectral norm (closed form, secular equation, or a dense one-sided Jacobi SVD) and its
 * vector-Jacobian product. */
#include "norm/ns_norm_jac.h"
#include "norm/ns_norm_jac_internal.h"

#include <float.h>
#include <math.h>

#include "norm/ns_jacobian.h"
#include "norm/ns_normalize_internal.h"
#include "norm/ns_norm_math_internal.h"

size_t ns_norm_jac_work(size_t L)
{
    return L * L + 3 * L;
}

double ns_jac_softmax1_max(const double *a, size_t n, double a0)
{
    double d1 = 0.0, d2 = 0.0;
    size_t n1 = 0, cnt = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(a[i] > 0.0))
            continue;
        cnt++;
        if (a[i] > d1) {
            d2 = d1;
            d1 = a[i];
            n1 = 1;
        } else if (a[i] == d1) {
            n1++;
        } else if (a[i] > d2) {
            d2 = a[i];
        }
    }
    if (cnt == 0 || (cnt == 1 && !(a0 > 0.0)))
        return 0.0;
    if (n1 >= 2)
        return d1;
    if (cnt == 1) /* a_1 / (a_1 - l) = a0 / l */
        return d1 * a0 / (d1 + a0);
    /* g(l) = sum_i a_i / (a_i - l) - a0 / l rises from -inf to +inf on (d_(2), d_(1)) */
    double lo = d2, hi = d1;
    for (int it = 0; it < 4096; it++) {
        double mid = lo + 0.5 * (hi - lo), g = a0 > 0.0 ? -a0 / mid : 0.0;
        if (!(mid > lo && mid < hi))
            break;
        for (size_t i = 0; i < n; i++)
            if (a[i] > 0.0)
                g += a[i] / (a[i] - mid);
        if (g > 0.0)
            hi = mid;
        else
            lo = mid;
    }
    return lo + 0.5 * (hi - lo);
}

double ns_jac_dense_norm(double *A, size_t n)
{
    double amax = 0.0; /* scaled to a largest entry of 1: the squares neither under- nor overflow */
    for (size_t i = 0; i < n * n; i++)
        amax = fmax(amax, fabs(A[i]));
    if (amax == 0.0 || !isfinite(amax))
        return amax;
    for (size_t i = 0; i < n * n; i++)
        A[i] /= amax;
    for (int sweep = 0; sweep < 100; sweep++) {
        int rotated = 0;
        for (size_t p = 0; p + 1 < n; p++) {
            for (size_t q = p + 1; q < n; q++) {
                double al = 0.0, be = 0.0, ga = 0.0;
                for (size_t r = 0; r < n; r++) {
                    double x = A[r * n + p], y = A[r * n + q];
                    al += x * x;
                    be += y * y;
                    ga += x * y;
                }
                if (ga == 0.0 || fabs(ga) <= DBL_EPSILON * sqrt(al) * sqrt(be))
                    continue;
                rotated = 1;
                double zeta = (be - al) / (2.0 * ga);
                double t = fabs(zeta) > 1e150 ? 0.5 / zeta
                                              : copysign(1.0, zeta) / (fabs(zeta) + hypot(1.0, zeta));
                double c = 1.0 / hypot(1.0, t), s = c * t;
                for (size_t r = 0; r < n; r++) {
                    double x = A[r * n + p], y = A[r * n + q];
                    A[r * n + p] = c * x - s * y;
                    A[r * n + q] = s * x + c * y;
                }
            }
        }
        if (!rotated)
            break;
    }
    double best = 0.0;
    for (size_t q = 0; q < n; q++) {
        double s = 0.0;
        for (size_t r = 0; r < n; r++)
            s += A[r * n + q] * A[r * n + q];
        best = fmax(best, sqrt(s));
    }
    return best * amax;
}

/* softpick's u_j = [y_j > 0] e^(y_j) / D and s_k = sign(y_k) e^(y_k) / D (D = sum |e^y - 1|),
 * from the logs (e^y / D = e^(y - M) / D', the forward's scaling); 0 when D = 0. With diag,
 * diag[j] = u_j (1 - a_j) = J_jj T, the 1 - a_j as the other keys' share of D (no cancellation
 * when a_j is near 1). */
static int ns_softpick_us(const double *z, size_t L, double T, double *u, double *s, double *diag)
{
    double M = -INFINITY;
    for (size_t j = 0; j < L; j++)
        M = fmax(M, ns_log_abs_expm1(z[j] / T));
    if (M == -INFINITY)
        return 0;
    double D = 0.0;
    for (size_t j = 0; j < L; j++)
        D += exp(ns_log_abs_expm1(z[j] / T) - M);
    double lD = log(D);
    for (size_t j = 0; j < L; j++) {
        double y = z[j] / T, e = exp((y - M) - lD);
        u[j] = y > 0.0 ? e : 0.0;
        s[j] = y > 0.0 ? e : y < 0.0 ? -e : 0.0;
    }
    for (size_t j = 0; diag && j < L; j++) {
        double rest = 0.0;
        for (size_t k = 0; k < L; k++)
            rest += k == j ? 0.0 : exp(ns_log_abs_expm1(z[k] / T) - M);
        diag[j] = z[j] / T > 0.0 ? u[j] * (rest / D) : 0.0;
    }
    return 1;
}

/* The dense J = da/dz (row-major, L x L, the 1/T included) of softpick or stick-breaking into
 * J; work holds 3 L. Returns 0 when J does not exist (softpick's D = 0). */
static int ns_dense_jac(const ns_normalizer *f, const double *z, size_t L, double T,
                        const ns_norm_row *r, double *J, double *work)
{
    double *u = work, *s = work + L, *diag = work + 2 * L;
    if (f->kind == NS_NORM_SOFTPICK) {
        if (!ns_softpick_us(z, L, T, u, s, diag))
            return 0;
        for (size_t j = 0; j < L; j++)
            for (size_t k = 0; k < L; k++)
                J[j * L + k] = (j == k ? diag[j] : -r->a[j] * s[k]) / T;
        return 1;
    }
    for (size_t j = 0; j < L; j++) { /* stick-breaking: u = 1 - beta, s = beta */
        u[j] = ns_sigmoid(-z[j] / T);
        s[j] = ns_sigmoid(z[j] / T);
    }
    for (size_t j = 0; j < L; j++)
        for (size_t k = 0; k < L; k++)
            J[j * L + k] = r->a[j] * (k == j ? u[j] : k > j ? -s[k] : 0.0) / T;
    return 1;
}

/* softmax1's implicit 0 logit's weight e^-M / den over z[0..L), as the forward's. */
static double ns_softmax1_implicit(const double *z, size_t L, double T)
{
    double M = 0.0, den;
    for (size_t j = 0; j < L; j++)
        M = fmax(M, z[j] / T);
    den = exp(-M);
    for (size_t j = 0; j < L; j++)
        den += exp(z[j] / T - M);
    return exp(-M) / den;
}

/* sigmoid's diagonal Jacobian's largest entry over the keys from..L-1 (b from the row's L). */
static double ns_sigmoid_jac_max(const ns_normalizer *f, const double *z, size_t L, size_t from,
                                 double T)
{
    double b = ns_normalizer_sigmoid_bias(f, L), best = 0.0;
    for (size_t j = from; j < L; j++) { /* a (1 - a) = e^(log sig(x) + log sig(-x)) */
        double x = z[j] / T + b;
        best = fmax(best, exp(ns_log_sigmoid(x) + ns_log_sigmoid(-x)));
    }
    return best / T;
}

/* relu's diagonal Jacobian's largest entry over the keys from..L-1 (relu'(0) = 0). */
static double ns_relu_jac_max(const double *z, size_t L, size_t from, double T)
{
    for (size_t j = from; j < L; j++)
        if (z[j] > 0.0)
            return 1.0 / (T * (double)L);
    return 0.0;
}

double ns_norm_jac_view_norm(const ns_normalizer *f, const double *z, size_t L, double T,
                             const ns_norm_row *r, double *work)
{
    if (L < 2)
        return 0.0;
    switch (f->kind) {
    case NS_NORM_SOFTMAX:
    case NS_NORM_SSMAX:
    case NS_NORM_SPARSEMAX:
    case NS_NORM_ENTMAX15:
    case NS_NORM_ENTMAX: {
        double c, W = 0.0, *b = work + L;
        const double *w = ns_jac_structure(f, r->a, L, T, work, &c);
        for (size_t j = 0; j < L; j++)
            W += w[j];
        if (!(W > 0.0))
            return 0.0;
        for (size_t j = 0; j < L; j++)
            b[j] = w[j] / W;
        return ns_jac_softmax1_max(b + 1, L - 1, b[0]) * W * fabs(c);
    }
    case NS_NORM_SOFTMAX1:
        return ns_jac_softmax1_max(r->a + 1, L - 1, r->a[0] + ns_softmax1_implicit(z, L, T)) / T;
    case NS_NORM_SIGMOID:
        return ns_sigmoid_jac_max(f, z, L, 1, T);
    case NS_NORM_RELU:
        return ns_relu_jac_max(z, L, 1, T);
    default: /* softpick, stick-breaking: no closed form */
        return NAN;
    }
}

double ns_norm_jac_norm(const ns_normalizer *f, const double *z, size_t L, double T,
                        const ns_norm_row *r, double *work)
{
    switch (f->kind) {
    case NS_NORM_SOFTMAX:
    case NS_NORM_SSMAX:
    case NS_NORM_SPARSEMAX:
    case NS_NORM_ENTMAX15:
    case NS_NORM_ENTMAX:
        return ns_jac_exact_norm(f, r->a, L, T, work);
    case NS_NORM_SOFTMAX1:
        return ns_jac_softmax1_max(r->a, L, ns_softmax1_implicit(z, L, T)) / T;
    case NS_NORM_SIGMOID:
        return ns_sigmoid_jac_max(f, z, L, 0, T);
    case NS_NORM_RELU:
        return ns_relu_jac_max(z, L, 0, T);
    case NS_NORM_SOFTPICK:
    case NS_NORM_STICKBREAKING:
        if (!ns_dense_jac(f, z, L, T, r, work, work + L * L))
            return NAN;
        return ns_jac_dense_norm(work, L);
    default:
        return NAN;
    }
}

void ns_norm_jac_vjp(const ns_normalizer *f, const double *z, size_t L, double T,
                     const ns_norm_row *r, const double *g, double *out, double *work)
{
    const double *a = r->a;
    double ag = 0.0;
    for (size_t j = 0; j < L; j++)
        ag += a[j] * g[j];
    switch (f->kind) {
    case NS_NORM_SOFTMAX1: /* (diag(a) - a a^T) / T: a function of the weights alone */
        ns_norm_jac_vjp_weights(f, a, g, L, T, out, work);
        return;
    case NS_NORM_SIGMOID: {
        double b = ns_normalizer_sigmoid_bias(f, L);
        for (size_t j = 0; j < L; j++) {
            double x = z[j] / T + b;
            out[j] = exp(ns_log_sigmoid(x) + ns_log_sigmoid(-x)) * g[j] / T;
        }
        return;
    }
    case NS_NORM_RELU:
        for (size_t j = 0; j < L; j++)
            out[j] = z[j] > 0.0 ? g[j] / (T * (double)L) : 0.0;
        return;
    case NS_NORM_SOFTPICK: { /* (diag(u) - a s^T)^T g = u g - s <a, g> */
        double *u = work, *s = work + L;
        int ok = ns_softpick_us(z, L, T, u, s, NULL);
        for (size_t k = 0; k < L; k++)
            out[k] = ok ? (u[k] * g[k] - s[k] * ag) / T : NAN;
        return;
    }
    case NS_NORM_STICKBREAKING: { /* out_k = a_k (1 - beta_k) g_k - beta_k sum_{j < k} g_j a_j */
        double pre = 0.0;
        for (size_t k = 0; k < L; k++) {
            out[k] = (a[k] * ns_sigmoid(-z[k] / T) * g[k] - ns_sigmoid(z[k] / T) * pre) / T;
            pre += g[k] * a[k];
        }
        return;
    }
    default: /* on the simplex */
        ns_jac_vjp(f, a, g, L, T, out, work);
        return;
    }
}

void ns_norm_jac_vjp_weights(const ns_normalizer *f, const double *a, const double *g, size_t L,
                             double T, double *out, double *work)
{
    switch (f->kind) {
    case NS_NORM_SOFTMAX1: { /* (diag(a) - a a^T) / T, symmetric */
        double ag = 0.0;
        for (size_t j = 0; j < L; j++)
            ag += a[j] * g[j];
        for (size_t j = 0; j < L; j++)
            out[j] = a[j] * (g[j] - ag) / T;
        return;
    }
    case NS_NORM_SIGMOID: /* diag(a (1 - a)) / T */
        for (size_t j = 0; j < L; j++)
            out[j] = a[j] * (1.0 - a[j]) * g[j] / T;
        return;
    default:
        if (ns_normalizer_on_simplex(f->kind)) {
            ns_jac_vjp(f, a, g, L, T, out, work);
            return;
        }
        for (size_t j = 0; j < L; j++)
            out[j] = NAN;
        return;
    }
}

double ns_norm_jac_norm_weights(const ns_normalizer *f, const double *a, size_t L, double T,
                                double *work)
{
    switch (f->kind) {
    case NS_NORM_SOFTMAX1: { /* the implicit 0 logit's weight: 1 - sum a, all the weights tell */
        double sum = 0.0;
        for (size_t j = 0; j < L; j++)
            sum += a[j];
        return ns_jac_softmax1_max(a, L, fmax(0.0, 1.0 - sum)) / T;
    }
    case NS_NORM_SIGMOID: {
        double best = 0.0;
        for (size_t j = 0; j < L; j++)
            best = fmax(best, a[j] * (1.0 - a[j]));
        return best / T;
    }
    default:
        return ns_normalizer_on_simplex(f->kind) ? ns_jac_exact_norm(f, a, L, T, work) : NAN;
    }
}
