/* fuzz_nc_read: ns_nc_info_read (the NetCDF reader behind `verify` and `archive`) on arbitrary
 * bytes written to a private temporary file. Classic and 64-bit-offset files are refused by the
 * reader before NetCDF-C parses them; NetCDF-4 files are parsed by HDF5: a crash inside those
 * libraries is still a finding (`verify` must survive a hostile file). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/ns_nc_read.h"
#include "ns_fuzz.h"

/* LeakSanitizer suppressions for this target only (its fuzzing and its replay in the sanitizer
 * make check). Evidence: on corrupt HDF5 metadata (fuzz/regressions/nc_read/hdf5-leak-*.nc)
 * nc_open fails and the leaked blocks are allocated inside libhdf5 (H5FL_blk_malloc under
 * H5Gopen2 under NC4_open) or inside libnetcdf (NC_hashmapnew, nclistsetalloc,
 * nc4_nc4f_list_add: the half-built file metadata a failed open does not release). This binary's
 * only NetCDF activity is ns_nc_info_read, which allocates nothing before nc_open succeeds and
 * closes every file it opened, so no normsweep leak can hide behind these two modules here; the
 * rest of the test suite runs without them. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libhdf5_serial.so\nleak:libnetcdf.so\n";
}

static char fuzz_dir[4096];
static char fuzz_path[4200];

static void fuzz_cleanup(void)
{
    if (fuzz_path[0])
        unlink(fuzz_path);
    if (fuzz_dir[0])
        rmdir(fuzz_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    ns_fuzz_make_tmpdir(fuzz_dir, sizeof fuzz_dir, "nc");
    snprintf(fuzz_path, sizeof fuzz_path, "%s/input.nc", fuzz_dir);
    atexit(fuzz_cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_fuzz_write_file(fuzz_path, data, size);
    ns_nc_info info;
    memset(&info, 0, sizeof info);
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_nc_info_read(fuzz_path, &info, &err);
    if (rc != NS_OK) {
        ns_fuzz_check_err(rc, &err);
        NS_FUZZ_CHECK(strstr(err.msg, fuzz_path) != NULL, "message does not name the file: %s", err.msg);
    } else {
        for (size_t i = 0; i < info.nattrs; i++) {
            NS_FUZZ_CHECK(info.attrs[i].name != NULL, "attribute %zu has no name", i);
            if (info.attrs[i].text)
                (void)strlen(info.attrs[i].text); /* NUL-terminated inside its allocation */
            const char *t = ns_nc_info_text(&info, info.attrs[i].name);
            (void)t;
        }
        for (size_t i = 0; i < info.ndims; i++)
            NS_FUZZ_CHECK(info.dims[i].name != NULL, "dimension %zu has no name", i);
    }
    ns_nc_info_free(&info);
    return 0;
}
