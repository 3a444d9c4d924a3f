/* ns_asset_ctx: where assets live and how they are obtained (the context every fetching function
 * takes), and the callback that receives its progress lines. Set up by ns_assets_ctx_init. */
#ifndef NS_ASSET_CTX_H
#define NS_ASSET_CTX_H

#include "common/ns_asset_ref.h"
#include "common/ns_hooks.h"

/* Where fetching tells what it does (copies from the mirror, downloads, the fallback warning):
 * an ns_line_fn (common/ns_hooks.h), one line at a time; the CLI prints them. */

#define NS_ASSETS_MAX_DEAD_HOSTS 8

/* Where assets live and how they are obtained. Initialise with ns_assets_ctx_init; the fields may
 * then be changed (e.g. copy, offline, log). Holds a small per-context cache of unreachable hosts
 * so one fetch waits for a dead host at most once. */
typedef struct ns_assets_ctx {
    char assets_dir[NS_ASSET_PATH_MAX]; /* absolute */
    char mirror_dir[NS_ASSET_PATH_MAX]; /* "" when no mirror is configured */
    int offline;             /* never download */
    int no_download;         /* download nothing, but say when a download could supply a file
                                (ns_assets_fetch.download 0) */
    int copy;                /* copy mirror files instead of symlinking them */
    int accept_unconfirmed;  /* download files whose manifest checksum is "unconfirmed" */
    long connect_timeout_s;  /* per download attempt (default 10) */
    ns_line_fn log;    /* progress lines and warnings; NULL: silent */
    void *log_user;
    int verbose;             /* also log files that were already present (the CLI sets it) */
    char dead_hosts[NS_ASSETS_MAX_DEAD_HOSTS][256];
    size_t n_dead_hosts;
} ns_assets_ctx;

#endif
