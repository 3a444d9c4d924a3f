/* nc_datadump: print a canonical digest of a NetCDF file's data — every variable's name, type,
 * dimensions, attributes and the SHA-256 of its raw values — leaving out global attributes
 * (which record times, hosts, MPI size). Two files with the same output have byte-identical data.
 * Usage: nc_datadump FILE.nc */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_sha256.h"

static int fail_nc(const char *path, const char *what, int rc)
{
    fprintf(stderr, "nc_datadump: %s: %s: %s\n", path, what, nc_strerror(rc));
    return 1;
}

static int print_attributes(int ncid, int varid, int natts)
{
    for (int a = 0; a < natts; a++) {
        char name[NC_MAX_NAME + 1];
        nc_type type;
        size_t len;
        if (nc_inq_attname(ncid, varid, a, name) || nc_inq_att(ncid, varid, name, &type, &len))
            return 1;
        size_t size = 0;
        if (nc_inq_type(ncid, type, NULL, &size))
            return 1;
        printf("  @%s type=%d len=%zu", name, (int)type, len);
        if (type == NC_STRING) {
            char **s = calloc(len ? len : 1, sizeof *s);
            if (!s || nc_get_att_string(ncid, varid, name, s)) {
                free(s);
                return 1;
            }
            for (size_t i = 0; i < len; i++)
                printf(" \"%s\"", s[i] ? s[i] : "");
            nc_free_string(len, s);
            free(s);
        } else {
            unsigned char *buf = malloc(len * size + 1);
            if (!buf || nc_get_att(ncid, varid, name, buf)) {
                free(buf);
                return 1;
            }
            char hex[NS_SHA256_HEX_LEN + 1];
            ns_err err;
            if (ns_sha256_buffer(buf, len * size, hex, &err)) {
                free(buf);
                return 1;
            }
            printf(" sha256=%s", hex);
            free(buf);
        }
        printf("\n");
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: nc_datadump FILE.nc\n");
        return 2;
    }
    const char *path = argv[1];
    int ncid, rc;
    if ((rc = nc_open(path, NC_NOWRITE, &ncid)))
        return fail_nc(path, "open", rc);
    int nvars;
    if ((rc = nc_inq_nvars(ncid, &nvars)))
        return fail_nc(path, "inq_nvars", rc);
    for (int v = 0; v < nvars; v++) {
        char name[NC_MAX_NAME + 1];
        nc_type type;
        int ndims, dimids[NC_MAX_VAR_DIMS], natts;
        if ((rc = nc_inq_var(ncid, v, name, &type, &ndims, dimids, &natts)))
            return fail_nc(path, "inq_var", rc);
        size_t count = 1, size = 0;
        printf("%s type=%d dims=(", name, (int)type);
        for (int d = 0; d < ndims; d++) {
            char dname[NC_MAX_NAME + 1];
            size_t len;
            if ((rc = nc_inq_dim(ncid, dimids[d], dname, &len)))
                return fail_nc(path, "inq_dim", rc);
            printf("%s%s=%zu", d ? "," : "", dname, len);
            count *= len;
        }
        printf(")");
        if ((rc = nc_inq_type(ncid, type, NULL, &size)))
            return fail_nc(path, "inq_type", rc);
        if (type == NC_STRING) {
            char **s = calloc(count ? count : 1, sizeof *s);
            if (!s || (count && (rc = nc_get_var_string(ncid, v, s))))
                return fail_nc(path, name, rc);
            for (size_t i = 0; i < count; i++)
                printf(" \"%s\"", s[i] ? s[i] : "");
            if (count)
                nc_free_string(count, s);
            free(s);
            printf("\n");
        } else {
            unsigned char *buf = malloc(count * size + 1);
            if (!buf)
                return 1;
            if (count && (rc = nc_get_var(ncid, v, buf)))
                return fail_nc(path, name, rc);
            char hex[NS_SHA256_HEX_LEN + 1];
            ns_err err;
            if (ns_sha256_buffer(buf, count * size, hex, &err))
                return 1;
            printf(" sha256=%s\n", hex);
            free(buf);
        }
        if (print_attributes(ncid, v, natts))
            return fail_nc(path, "attributes", NC_EINVAL);
    }
    nc_close(ncid);
    return 0;
}
