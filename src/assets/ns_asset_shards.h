/* ns_asset_shards: the identity of a sharded model directory given by path -- the weights'
 * identity of docs/MODELS.md (common/ns_sha256.h, ns_sha256_listing): the SHA-256 of the
 * sha256sum listing of the shard files its model.safetensors.index.json names (the distinct
 * values of its weight_map), the same value ns_model_sha256 gives from the mapped bytes and a
 * manifest's sharded set gives from its checksums. Also the shard names, for those that pack the
 * model's files (archive --with-model). */
#ifndef NS_ASSET_SHARDS_H
#define NS_ASSET_SHARDS_H

#include <stddef.h>

#include "common/ns_error.h"

/* The distinct shard files index names (weight_map values), sorted in byte order; each a plain
 * file name ending in .safetensors. *names (free with ns_asset_shards_free) and *n.
 * NS_ERR_IO (unreadable), NS_ERR_FORMAT (not an index, a bad name, no shard), NS_ERR_NOMEM. */
int ns_asset_shards_names(const char *index, char ***names, size_t *n, ns_err *err);
void ns_asset_shards_free(char **names, size_t n);

/* hex = the identity of the weights index names, each shard read from dir. */
int ns_asset_shards_identity(const char *dir, const char *index, char hex[65], ns_err *err);

#endif
