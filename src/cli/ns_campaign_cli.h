/* ns_campaign_cli: the campaign side of `normsweep run` and `validate` (ns_campaign_cli.c):
 * a sweep file with `models:` runs and validates model by model (docs/SWEEP.md, "Campaigns"). */
#ifndef NS_CAMPAIGN_CLI_H
#define NS_CAMPAIGN_CLI_H

#include <stddef.h>

#include "assets/ns_assets.h"
#include "spec/ns_campaign.h"
#include "sweep/ns_sweep.h"

/* Read path and, when it is a campaign, fill *c (c->n > 0) and *text / *len (the file's bytes;
 * free them). out_dir (NULL: the file's output_dir:) overrides the output directory. The
 * campaign's own problems are printed; returns an exit code (NS_EXIT_OK also for a file that is
 * not a campaign, or cannot be read: the sweep loader says why). */
int ns_cli_campaign_read(const char *cmd, const char *path, const char *out_dir, ns_campaign *c,
                         char **text, size_t *len);

/* The text every model shares, checked once (schema only: model 0's sweep text), its problems
 * printed at the campaign's lines. Returns an exit code. */
int ns_cli_campaign_schema(const ns_campaign *c, const char *cmd);

/* 1 when model is a manifest model set without a fallback that cannot be had here (not in the
 * assets directory, not in the mirror, its download host unreachable, downloads off, or its
 * checksums unconfirmed), with why: the `assets fetch` that would download it, from where, and
 * why that cannot be done here. */
int ns_cli_campaign_missing(ns_assets_ctx *ctx, const char *model, char *why, size_t len);

/* `normsweep run CAMPAIGN.yaml`: opt as parsed (--output: the output directory, already applied
 * to c; --resume; --uncompressed; --stall-timeout). Initialises and finalises MPI. Returns the
 * exit code. */
int ns_cli_campaign_run(ns_campaign *c, const char *text, size_t len, ns_sweep_options *opt,
                        int argc, char **argv);

#endif
