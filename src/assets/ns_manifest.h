/* ns_manifest: the asset manifest (assets/manifest.json, format "normsweep-assets-1"): named sets
 * of files with their SHA-256 sums, mirror paths and download URLs; where to find it, how it is
 * read and validated. Fetching the files is ns_assets'. */
#ifndef NS_MANIFEST_H
#define NS_MANIFEST_H

#include <stddef.h>

#include "common/ns_error.h"

/* One file of an asset set. */
typedef struct ns_asset_file {
    char *name;          /* file name inside the set's local directory */
    char sha256[65];     /* lowercase hex; "" when the manifest does not know it (computed and
                            printed on first fetch, then trusted through the stamp) */
    long long size;      /* bytes; -1 when unknown */
    char *mirror_path;   /* relative to the mirror directory; NULL when none */
    char **urls;         /* download locations, tried in order */
    size_t n_urls;
    char *archive_file;  /* "from_archive": made by extracting archive_member from this earlier
                            file of the set (a package, e.g. an npm tarball); NULL when none */
    char *archive_member;
    int unconfirmed;     /* "sha256": "unconfirmed": not known from two independent public
                            sources; never downloaded unless the fetch accepts that (the sum is
                            then computed and printed, as for "unknown") */
} ns_asset_file;

/* A named set of files that live together in one directory of the assets directory. */
typedef struct ns_asset_set {
    char *name;          /* "tokenizer", "war_and_peace", "gpt2", ... */
    char *kind;          /* "tokenizer", "corpus", "model" or "data" */
    char *dir;           /* subdirectory of the assets directory */
    char *main_file;     /* the file whose checksum identifies the set */
    char *fallback;      /* set used when this one cannot be had (NULL: none) */
    char *description;   /* one line, may be NULL */
    int if_available;    /* "fetch": "if-available": a default fetch skips it when unavailable */
    ns_asset_file *files;
    size_t n_files;
} ns_asset_set;

typedef struct ns_manifest {
    char *path;          /* the file it was read from */
    ns_asset_set *sets;
    size_t n_sets;
} ns_manifest;

/* The manifest to use: NORMSWEEP_MANIFEST, else the source tree's assets/manifest.json (compiled
 * in), else the installed $(pkgdatadir)/manifest.json. Fails naming every place looked at. */
int ns_manifest_locate(char *out, size_t out_len, ns_err *err);
/* Parse and validate a manifest; on failure *m is left empty and err names the file (and line). */
int ns_manifest_load(const char *path, ns_manifest *m, ns_err *err);
/* Free everything ns_manifest_load allocated; safe on a zeroed manifest. */
void ns_manifest_free(ns_manifest *m);
/* The set called name, or NULL. */
const ns_asset_set *ns_manifest_find(const ns_manifest *m, const char *name);

#endif
