/* ns_archive_check: the manifest check of an archive (see ns_archive_check.h). */
#include "archive/ns_archive_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ns_archive_check_free(ns_archive_check *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->items[i].name);
    free(c->items);
    memset(c, 0, sizeof *c);
}

static int issue_add(ns_archive_check *c, ns_archive_issue_kind kind, const char *name,
                     size_t name_len, const char *listed, const char *actual, ns_err *err)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        ns_archive_issue *p = realloc(c->items, cap * sizeof *p);
        if (!p)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        c->items = p;
        c->cap = cap;
    }
    ns_archive_issue *is = &c->items[c->n];
    memset(is, 0, sizeof *is);
    is->kind = kind;
    if (!(is->name = strndup(name, name_len)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    snprintf(is->listed, sizeof is->listed, "%s", listed ? listed : "");
    snprintf(is->actual, sizeof is->actual, "%s", actual ? actual : "");
    c->n++;
    return NS_OK;
}

static int is_hex64(const char *s)
{
    for (size_t i = 0; i < NS_SHA256_HEX_LEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int ns_archive_check_manifest(const ns_archive_list *members, const char *text, size_t len,
                              ns_archive_check *out, ns_err *err)
{
    int rc = NS_OK;
    memset(out, 0, sizeof *out);
    unsigned char *seen = calloc(members->n + 1, 1);
    if (!seen)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < members->n; i++)
        if (strcmp(members->items[i].name, NS_ARCHIVE_MANIFEST) != 0)
            out->n_members++;
    if (!text) {
        rc = issue_add(out, NS_ARCHIVE_NO_MANIFEST, NS_ARCHIVE_MANIFEST,
                       strlen(NS_ARCHIVE_MANIFEST), NULL, NULL, err);
        goto done;
    }
    size_t pos = 0;
    while (pos < len) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        if (ll == 0)
            continue;
        /* "<64 hex>  <name>" (sha256sum's text mode) or "<64 hex> *<name>" (binary mode) */
        if (ll < NS_SHA256_HEX_LEN + 3 || !is_hex64(line) || line[NS_SHA256_HEX_LEN] != ' ' ||
            (line[NS_SHA256_HEX_LEN + 1] != ' ' && line[NS_SHA256_HEX_LEN + 1] != '*')) {
            if ((rc = issue_add(out, NS_ARCHIVE_BAD_LINE, line, ll, NULL, NULL, err)) != NS_OK)
                goto done;
            continue;
        }
        out->n_listed++;
        char sum[NS_SHA256_HEX_LEN + 1];
        memcpy(sum, line, NS_SHA256_HEX_LEN);
        sum[NS_SHA256_HEX_LEN] = 0;
        const char *name = line + NS_SHA256_HEX_LEN + 2;
        size_t nl_len = ll - NS_SHA256_HEX_LEN - 2;
        size_t found = SIZE_MAX;
        for (size_t i = 0; i < members->n; i++)
            if (strlen(members->items[i].name) == nl_len &&
                memcmp(members->items[i].name, name, nl_len) == 0) {
                found = i;
                break;
            }
        if (found == SIZE_MAX) {
            rc = issue_add(out, NS_ARCHIVE_MISSING, name, nl_len, sum, NULL, err);
        } else if (seen[found]) {
            rc = issue_add(out, NS_ARCHIVE_DUPLICATE, name, nl_len, sum, NULL, err);
        } else {
            seen[found] = 1;
            if (strcmp(members->items[found].sha256, sum) != 0)
                rc = issue_add(out, NS_ARCHIVE_MISMATCH, name, nl_len, sum,
                               members->items[found].sha256, err);
        }
        if (rc != NS_OK)
            goto done;
    }
    for (size_t i = 0; i < members->n; i++)
        if (!seen[i] && strcmp(members->items[i].name, NS_ARCHIVE_MANIFEST) != 0 &&
            (rc = issue_add(out, NS_ARCHIVE_UNLISTED, members->items[i].name,
                            strlen(members->items[i].name), NULL, members->items[i].sha256,
                            err)) != NS_OK)
            goto done;
done:
    free(seen);
    if (rc != NS_OK)
        ns_archive_check_free(out);
    return rc;
}

void ns_archive_issue_describe(const ns_archive_issue *is, char *buf, size_t size)
{
    switch (is->kind) {
    case NS_ARCHIVE_NO_MANIFEST:
        snprintf(buf, size, "the archive has no %s", NS_ARCHIVE_MANIFEST);
        break;
    case NS_ARCHIVE_BAD_LINE:
        snprintf(buf, size, "%s: malformed line '%.200s'", NS_ARCHIVE_MANIFEST, is->name);
        break;
    case NS_ARCHIVE_MISSING:
        snprintf(buf, size, "member %s: listed in the manifest but missing from the archive",
                 is->name);
        break;
    case NS_ARCHIVE_MISMATCH:
        snprintf(buf, size, "member %s: SHA-256 differs (manifest %s, archive %s)", is->name,
                 is->listed, is->actual);
        break;
    case NS_ARCHIVE_UNLISTED:
        snprintf(buf, size, "member %s: in the archive but not listed in the manifest", is->name);
        break;
    case NS_ARCHIVE_DUPLICATE:
        snprintf(buf, size, "member %s: listed twice in the manifest", is->name);
        break;
    default:
        snprintf(buf, size, "member %s: unknown problem", is->name);
    }
    ns_text_one_line(buf); /* names come from the manifest's text (a CRLF line ends in '\r') */
}
