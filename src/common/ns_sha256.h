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
/* Streams the file in 1 MiB blocks. */
int ns_sha256_file(const char *path, char hex[NS_SHA256_HEX_LEN + 1], ns_err *err);

#endif
