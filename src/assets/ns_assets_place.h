/* ns_assets_place: make one file of an asset set present and verified in the assets directory:
 * already there (trusted through its stamp or rehashed), else linked or copied from the mirror,
 * else downloaded; and what the mirror and the download hosts can supply. */
#ifndef NS_ASSETS_PLACE_H
#define NS_ASSETS_PLACE_H

#include <stddef.h>

#include "assets/ns_asset_ctx.h"
#include "assets/ns_asset_stamp.h"
#include "assets/ns_manifest.h"
#include "common/ns_error.h"

/* Make one file present and verified. *source receives "assets-dir", "mirror" or "download". */
int ns_assets_ensure_file(ns_assets_ctx *ctx, const ns_asset_set *set, const ns_asset_file *file,
                          const char *setdir, ns_stamp *stp, int allow_fetch, const char **source,
                          char sha[65], ns_err *err);
/* Why the mirror cannot supply file (for messages), or "" when it can (mpath then set). */
void ns_assets_mirror_lookup(const ns_assets_ctx *ctx, const ns_asset_file *file, char *mpath,
                             size_t mlen, char *why, size_t wlen);
/* Whether host did not answer earlier in this context; remember that it did not. */
int ns_assets_host_is_dead(const ns_assets_ctx *ctx, const char *host);
void ns_assets_mark_dead(ns_assets_ctx *ctx, const char *host);

#endif
