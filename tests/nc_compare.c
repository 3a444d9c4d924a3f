/* nc_compare: compare a `normsweep dump` file with a reference (token ids equal, attention weights
 * and values within tolerances); prints the maximum errors and exits 0 (match) or 1 (differ/error).
 *
 * Usage: nc_compare [--weight-tol X] [--value-tol Y] REFERENCE.nc CANDIDATE.nc
 * --value-tol is relative to max(1, largest |value| of the reference). */
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ncfile {
    const char *path;
    int ncid;
} ncfile;

static int fail_nc(const char *path, const char *what, int rc)
{
    fprintf(stderr, "nc_compare: %s: %s: %s\n", path, what, nc_strerror(rc));
    return -1;
}

/* Shape of a variable into dims[0..*ndims); -1 on error (message printed). */
static int var_shape(const ncfile *f, const char *name, int *varid, size_t *dims, int *ndims)
{
    int rc, ids[NC_MAX_VAR_DIMS];
    if ((rc = nc_inq_varid(f->ncid, name, varid)))
        return fail_nc(f->path, name, rc);
    if ((rc = nc_inq_varndims(f->ncid, *varid, ndims)) || (rc = nc_inq_vardimid(f->ncid, *varid, ids)))
        return fail_nc(f->path, name, rc);
    for (int i = 0; i < *ndims; i++)
        if ((rc = nc_inq_dimlen(f->ncid, ids[i], &dims[i])))
            return fail_nc(f->path, name, rc);
    return 0;
}

/* Read a whole variable of the same shape from both files as doubles (or ints). */
static int read_pair(const ncfile *a, const ncfile *b, const char *name, int as_int, void **va,
                     void **vb, size_t *n)
{
    int ia, ib, na, nb;
    size_t da[NC_MAX_VAR_DIMS], db[NC_MAX_VAR_DIMS];
    if (var_shape(a, name, &ia, da, &na) || var_shape(b, name, &ib, db, &nb))
        return -1;
    if (na != nb) {
        fprintf(stderr, "nc_compare: %s has %d dimensions in %s but %d in %s\n", name, na, a->path,
                nb, b->path);
        return -1;
    }
    *n = 1;
    for (int i = 0; i < na; i++) {
        if (da[i] != db[i]) {
            fprintf(stderr, "nc_compare: %s dimension %d is %zu in %s but %zu in %s\n", name, i,
                    da[i], a->path, db[i], b->path);
            return -1;
        }
        *n *= da[i];
    }
    size_t sz = as_int ? sizeof(int) : sizeof(double);
    *va = malloc(*n * sz + 1);
    *vb = malloc(*n * sz + 1);
    if (!*va || !*vb) {
        fprintf(stderr, "nc_compare: out of memory for %s\n", name);
        return -1;
    }
    int rc;
    if ((rc = as_int ? nc_get_var_int(a->ncid, ia, *va) : nc_get_var_double(a->ncid, ia, *va)))
        return fail_nc(a->path, name, rc);
    if ((rc = as_int ? nc_get_var_int(b->ncid, ib, *vb) : nc_get_var_double(b->ncid, ib, *vb)))
        return fail_nc(b->path, name, rc);
    return 0;
}

int main(int argc, char **argv)
{
    double wtol = 1e-5, vtol = 2e-5; /* defaults: see tests/dump_golden.sh */
    int i = 1;
    for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (strcmp(argv[i], "--weight-tol") == 0)
            wtol = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--value-tol") == 0)
            vtol = atof(argv[i + 1]);
        else
            break;
    }
    if (argc - i != 2) {
        fprintf(stderr, "usage: nc_compare [--weight-tol X] [--value-tol Y] REFERENCE.nc CANDIDATE.nc\n");
        return 1;
    }
    ncfile ref = {argv[i], -1}, cand = {argv[i + 1], -1};
    int rc, status = 1;
    void *ta = NULL, *tb = NULL, *wa = NULL, *wb = NULL, *va = NULL, *vb = NULL;
    size_t nt, nw, nv;
    if ((rc = nc_open(ref.path, NC_NOWRITE, &ref.ncid))) {
        fail_nc(ref.path, "open", rc);
        goto done;
    }
    if ((rc = nc_open(cand.path, NC_NOWRITE, &cand.ncid))) {
        fail_nc(cand.path, "open", rc);
        goto done;
    }
    if (read_pair(&ref, &cand, "token_id", 1, &ta, &tb, &nt) ||
        read_pair(&ref, &cand, "attention_weight", 0, &wa, &wb, &nw) ||
        read_pair(&ref, &cand, "value", 0, &va, &vb, &nv))
        goto done;

    size_t tok_diff = 0;
    for (size_t k = 0; k < nt; k++)
        tok_diff += ((int *)ta)[k] != ((int *)tb)[k];
    double ew = 0, ev = 0, vmax = 0;
    size_t at_w = 0, at_v = 0;
    const double *rw = wa, *cw = wb, *rv = va, *cv = vb;
    size_t n_nan = 0; /* a NaN anywhere is a mismatch, whatever the tolerance */
    for (size_t k = 0; k < nw; k++) {
        double e = fabs(rw[k] - cw[k]);
        n_nan += isnan(e);
        if (e > ew) {
            ew = e;
            at_w = k;
        }
    }
    for (size_t k = 0; k < nv; k++) {
        double e = fabs(rv[k] - cv[k]);
        n_nan += isnan(e);
        vmax = fmax(vmax, fabs(rv[k]));
        if (e > ev) {
            ev = e;
            at_v = k;
        }
    }
    double vlim = vtol * fmax(1.0, vmax);
    printf("token_id: %zu of %zu differ\n", tok_diff, nt);
    printf("attention_weight: max abs error %.3g at flat index %zu (tolerance %.3g)\n", ew, at_w, wtol);
    printf("value: max abs error %.3g at flat index %zu, max |value| %.3g (tolerance %.3g)\n", ev,
           at_v, vmax, vlim);
    if (n_nan)
        printf("NaN differences: %zu\n", n_nan);
    status = (tok_diff == 0 && n_nan == 0 && ew <= wtol && ev <= vlim) ? 0 : 1;
    printf("%s\n", status == 0 ? "MATCH" : "DIFFER");

done:
    if (ref.ncid >= 0)
        nc_close(ref.ncid);
    if (cand.ncid >= 0)
        nc_close(cand.ncid);
    free(ta);
    free(tb);
    free(wa);
    free(wb);
    free(va);
    free(vb);
    return status;
}
