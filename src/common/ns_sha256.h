/* ns_sha256: SHA-256 of buffers and files (OpenSSL's libcrypto), as lowercase hex. */
#ifndef NS_SHA256_H
#define NS_SHA256_H

#include <stddef.h>

#include "common/ns_error.h"

#define NS_SHA256_HEX_LEN 64

/* hex must hold NS_SHA256_HEX_LEN + 1 bytes. */
int ns_sha256_buffer(const void *data, size_t len, char hex[NS_SHA256_HEX_LEN + 1], ns_err *err);
/* SHA-256 of the concatenation of two buffers (without copying them together), as 32 bytes. */
int ns_sha256_two(const void *a, size_t alen, const void *b, size_t blen, unsigned char md[32],
                  ns_err *err);
/* 32 digest bytes as lowercase hex (hex holds NS_SHA256_HEX_LEN + 1 bytes). */
void ns_sha256_hex(const unsigned char md[32], char hex[NS_SHA256_HEX_LEN + 1]);
/* The SHA-256 identifying a set of files by their own SHA-256s (sha256s[i] of names[i], lowercase
 * hex): of the text `sha256sum` prints for them, one line "<sha256>  <name>\n" per file in byte
 * order of the names (strcmp). A sharded model checkpoint's identity (model/ns_checkpoint.h), so
 * that it can be computed from the files' bytes and, equally, from a manifest's checksums. */
int ns_sha256_listing(size_t n, const char *const *names, const char *const *sha256s,
                      char hex[NS_SHA256_HEX_LEN + 1], ns_err *err);
/* Streams the file in 1 MiB blocks. */
int ns_sha256_file(const char *path, char hex[NS_SHA256_HEX_LEN + 1], ns_err *err);

#endif
