/* fuzz_manifest: ns_archive_check_manifest (the MANIFEST.sha256 parser `verify` uses) on arbitrary
 * text against a fixed member list. Every issue must name something and be describable. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "archive/ns_archive.h"
#include "archive/ns_archive_check.h"
#include "ns_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_archive_member items[3] = {
        {.name = "run.nc", .sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", .size = 3},
        {.name = "sweep.yaml", .sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", .size = 0},
        {.name = NS_ARCHIVE_MANIFEST, .sha256 = "0000000000000000000000000000000000000000000000000000000000000000", .size = 0},
    };
    ns_archive_list members = {.items = items, .n = 3, .cap = 3, .top = NULL};
    /* An exact-size copy (the text is not NUL-terminated). */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    if (size)
        memcpy(text, data, size);
    ns_archive_check check = {0};
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_archive_check_manifest(&members, text, size, &check, &err);
    NS_FUZZ_CHECK(rc == NS_OK || rc == NS_ERR_NOMEM, "check_manifest: status %d: %s", rc, err.msg);
    if (rc == NS_OK) {
        NS_FUZZ_CHECK(check.n_members == 2, "n_members %zu (the manifest is not a member)", check.n_members);
        for (size_t i = 0; i < check.n; i++) {
            NS_FUZZ_CHECK(check.items[i].kind >= NS_ARCHIVE_NO_MANIFEST &&
                              check.items[i].kind <= NS_ARCHIVE_DUPLICATE,
                          "issue kind %d", (int)check.items[i].kind);
            char line[1024];
            ns_archive_issue_describe(&check.items[i], line, sizeof line);
            ns_fuzz_soft_line("issue", line);
        }
    }
    ns_archive_check_free(&check);
    free(text);
    return 0;
}
