/* ns_sha256: SHA-256 of buffers and files (OpenSSL's libcrypto), as lowercase hex. */
#ifndef NS_SHA256_H
#define NS_SHA256_H

#include <stddef.h>

#include "common/ns_error.h"

#define NS_SHA256_HEX_LEN 64

/* hex must hold NS_SHA256_HEX_LEN + 1 bytes. */
int ns_sha256_buffer(const void *data, size_t len, char hex[NS_SHA256_HEX_LEN + 1], ns_err *err);
/* Streams the file in 1 MiB blocks. */
int ns_sha256_file(const char *path, char hex[NS_SHA256_HEX_LEN + 1], ns_err *err);

#endif
