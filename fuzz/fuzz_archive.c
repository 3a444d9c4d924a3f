/* fuzz_archive: ns_archive_extract (the tar.gz reader behind `verify`) on arbitrary bytes written
 * to a private temporary file, extracting into a private directory; then, when the archive had a
 * MANIFEST.sha256, ns_archive_check_manifest on it. Extraction must never write outside the
 * destination (every member name must pass ns_archive_name_ok). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "archive/ns_archive.h"
#include "archive/ns_archive_check.h"
#include "ns_fuzz.h"

static char fuzz_dir[4096];
static char fuzz_path[4200];
static char fuzz_dest[4200];

static void fuzz_cleanup(void)
{
    if (fuzz_dir[0]) {
        ns_fuzz_empty_dir(fuzz_dir);
        rmdir(fuzz_dir);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    ns_fuzz_make_tmpdir(fuzz_dir, sizeof fuzz_dir, "archive");
    snprintf(fuzz_path, sizeof fuzz_path, "%s/input.tar.gz", fuzz_dir);
    snprintf(fuzz_dest, sizeof fuzz_dest, "%s/dest", fuzz_dir);
    atexit(fuzz_cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_fuzz_empty_dir(fuzz_dest);
    ns_fuzz_write_file(fuzz_path, data, size);
    ns_archive_list members = {0};
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_archive_extract(fuzz_path, fuzz_dest, &members, &err);
    if (rc != NS_OK) {
        ns_fuzz_check_err(rc, &err);
    } else {
        for (size_t i = 0; i < members.n; i++) {
            NS_FUZZ_CHECK(members.items[i].name && ns_archive_name_ok(members.items[i].name),
                          "unsafe member name accepted: \"%s\"", members.items[i].name);
            NS_FUZZ_CHECK(strlen(members.items[i].sha256) == NS_SHA256_HEX_LEN,
                          "member %s has no SHA-256", members.items[i].name);
        }
        const ns_archive_member *m = ns_archive_list_find(&members, NS_ARCHIVE_MANIFEST);
        char *mpath = m ? ns_path_join(fuzz_dest, NS_ARCHIVE_MANIFEST) : NULL;
        char *text = NULL;
        size_t len = 0;
        if (mpath && ns_file_read_all(mpath, 0, &text, &len, &err) == NS_OK) {
            ns_archive_check check = {0};
            rc = ns_archive_check_manifest(&members, text, len, &check, &err);
            NS_FUZZ_CHECK(rc == NS_OK || rc == NS_ERR_NOMEM, "check_manifest: %s", err.msg);
            for (size_t i = 0; i < check.n; i++) {
                char line[1024];
                ns_archive_issue_describe(&check.items[i], line, sizeof line);
                ns_fuzz_soft_line("issue", line);
            }
            ns_archive_check_free(&check);
        }
        free(text);
        free(mpath);
    }
    ns_archive_list_free(&members);
    /* Nothing may have been written beside dest (a path traversal would land there). */
    char *probe = ns_path_join(fuzz_dir, "input.tar.gz");
    NS_FUZZ_CHECK(probe && ns_file_exists(probe), "input file vanished");
    free(probe);
    return 0;
}
