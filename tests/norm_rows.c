/* norm_rows: a driver for tests/norm_rows.sh. It reads rows on stdin, one a line:
 *   <normalizer> <parameter or -> <T> <L> z_0 .. z_{L-1} g_0 .. g_{L-1}
 * and writes, one line each, what src/norm makes of it (ns_norm_row_eval, ns_norm_jac_norm,
 * ns_norm_jac_vjp), every number with 17 significant digits:
 *   m log_m jac_norm a_0.. p_0.. logp_0.. vjp_0..
 * or "error <message>". tests/check_norm_rows.py writes the rows and checks the answers against
 * its own evaluation of the published formulas. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "norm/ns_norm_jac.h"
#include "norm/ns_norm_jac_internal.h"
#include "norm/ns_norm_row.h"
#include "norm/ns_normalize_internal.h"

static void print_all(const double *x, size_t L)
{
    for (size_t i = 0; i < L; i++)
        printf(" %.17g", x[i]);
}

static int one_row(const char *name, const char *param, double T, size_t L, const double *z,
                   const double *g)
{
    ns_err err;
    ns_normalizer f;
    if (ns_normalizer_parse_any(name, &f, &err) != NS_OK) {
        printf("error %s\n", err.msg);
        return 0;
    }
    if (strcmp(param, "-") != 0)
        f.s = strtod(param, NULL); /* the one parameter: s, b or alpha */
    size_t nw = ns_norm_jac_work(L) > ns_norm_row_work(L) ? ns_norm_jac_work(L) : ns_norm_row_work(L);
    double *buf = malloc((5 * L + nw) * sizeof *buf);
    if (!buf)
        return -1;
    double *a = buf, *p = a + L, *lp = p + L, *vjp = lp + L, *work = vjp + L;
    ns_norm_row r = {a, p, lp, 0.0, 0.0, NULL};
    if (ns_norm_row_eval(&f, z, L, T, &r, work, &err) != NS_OK) {
        printf("error %s\n", err.msg);
        free(buf);
        return 0;
    }
    double jn = ns_norm_jac_norm(&f, z, L, T, &r, work);
    ns_norm_jac_vjp(&f, z, L, T, &r, g, vjp, work);
    printf("%.17g %.17g %.17g", r.m, r.log_m, jn);
    print_all(a, L);
    print_all(p, L);
    print_all(lp, L);
    print_all(vjp, L);
    printf("\n");
    free(buf);
    return 0;
}

int main(void)
{
    char name[64], param[64];
    double T;
    size_t L;
    while (scanf("%63s %63s %lg %zu", name, param, &T, &L) == 4) {
        if (L == 0 || L > 4096)
            return 2;
        double *zg = malloc(2 * L * sizeof *zg);
        if (!zg)
            return 1;
        for (size_t i = 0; i < 2 * L; i++)
            if (scanf("%lg", &zg[i]) != 1)
                return 2;
        if (one_row(name, param, T, L, zg, zg + L) != 0)
            return 1;
        free(zg);
    }
    return 0;
}
