/* ns_sha256: SHA-256 of buffers and files through libcrypto's EVP interface. */
#include "common/ns_sha256.h"

#include <unistd.h>

#include "common/ns_file.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void to_hex(const unsigned char *md, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
}

int ns_sha256_buffer(const void *data, size_t len, char hex[NS_SHA256_HEX_LEN + 1], ns_err *err)
{
    unsigned char md[32];
    NS_TRY(ns_sha256_two(data, len, NULL, 0, md, err));
    to_hex(md, hex);
    return NS_OK;
}

/* qsort on indices into the names of one ns_sha256_listing call (the array follows them) */
typedef struct listing_item {
    const char *name, *sha;
} listing_item;

static int cmp_item(const void *a, const void *b)
{
    return strcmp(((const listing_item *)a)->name, ((const listing_item *)b)->name);
}

int ns_sha256_listing(size_t n, const char *const *names, const char *const *sha256s,
                      char hex[NS_SHA256_HEX_LEN + 1], ns_err *err)
{
    listing_item *it = calloc(n ? n : 1, sizeof *it);
    size_t cap = 1;
    for (size_t i = 0; it && i < n; i++) {
        it[i] = (listing_item){names[i], sha256s[i]};
        cap += strlen(sha256s[i]) + 2 + strlen(names[i]) + 1;
    }
    char *text = it ? malloc(cap) : NULL;
    if (!text) {
        free(it);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    qsort(it, n, sizeof *it, cmp_item);
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(text + at, cap - at, "%s  %s\n", it[i].sha, it[i].name);
    int rc = ns_sha256_buffer(text, at, hex, err);
    free(text);
    free(it);
    return rc;
}

int ns_sha256_two(const void *a, size_t alen, const void *b, size_t blen, unsigned char md[32],
                  ns_err *err)
{
    unsigned char full[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && EVP_DigestUpdate(ctx, a, alen) &&
             EVP_DigestUpdate(ctx, b, blen) && EVP_DigestFinal_ex(ctx, full, &mdlen) && mdlen == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return ns_fail(err, NS_ERR_LIBRARY, "SHA-256 computation failed (libcrypto)");
    memcpy(md, full, 32);
    return NS_OK;
}

void ns_sha256_hex(const unsigned char md[32], char hex[NS_SHA256_HEX_LEN + 1])
{
    to_hex(md, hex);
}

int ns_sha256_file(const char *path, char hex[NS_SHA256_HEX_LEN + 1], ns_err *err)
{
    int fd;
    NS_TRY(ns_file_open_regular(path, &fd, err));
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return ns_fail(err, NS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char *buf = malloc(1 << 20);
    int rc = NS_OK;
    if (!ctx || !buf) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory for SHA-256", path);
        goto done;
    }
    if (!EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
        rc = ns_fail(err, NS_ERR_LIBRARY, "%s: SHA-256 init failed (libcrypto)", path);
        goto done;
    }
    size_t n;
    while ((n = fread(buf, 1, 1 << 20, f)) > 0) {
        if (!EVP_DigestUpdate(ctx, buf, n)) {
            rc = ns_fail(err, NS_ERR_LIBRARY, "%s: SHA-256 update failed (libcrypto)", path);
            goto done;
        }
    }
    if (ferror(f)) {
        rc = ns_fail(err, NS_ERR_IO, "%s: read failed", path);
        goto done;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32) {
        rc = ns_fail(err, NS_ERR_LIBRARY, "%s: SHA-256 final failed (libcrypto)", path);
        goto done;
    }
    to_hex(md, hex);
done:
    free(buf);
    if (ctx)
        EVP_MD_CTX_free(ctx);
    fclose(f);
    return rc;
}
