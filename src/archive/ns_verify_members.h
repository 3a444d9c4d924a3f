/* ns_verify_members: `verify`'s checks of what an archive's members state about the run against
 * the NetCDF file and the members themselves: provenance.json field by field (the fields archive
 * takes from the NetCDF, the members and their sizes, and no field archive does not write),
 * README.txt against the one archive writes for this NetCDF and these members, the report's model
 * (report/report.json), the model's, tokenizer's and corpus's name against their SHA-256 in the
 * asset manifests; and the list of members verify checks by their SHA-256 only. */
#ifndef NS_VERIFY_MEMBERS_H
#define NS_VERIFY_MEMBERS_H

#include "archive/ns_archive.h"
#include "archive/ns_verify_report.h"
#include "assets/ns_assets.h"
#include "io/ns_nc_read.h"

/* The NetCDF member: the one *.nc directly under the top directory (of several, the one
 * provenance.json names). NS_ERR_INVALID when there is none (or several and none named). */
int ns_verify_nc_member(const char *dir, const ns_archive_list *members, char **name, ns_err *err);

/* The archive's format: 1 without README.txt; else 2 or 3 as provenance.json says (3 when it
 * says neither: the check of `format` fails then). */
int ns_verify_archive_format(const char *dir, const ns_archive_list *members);

/* provenance.json, README.txt and report/report.json against the NetCDF (info, member ncname)
 * and the members: one PASS or FAIL line each (INFO when the archive's format has no README). */
void ns_verify_members_check(ns_vreport *v, const char *dir, const ns_archive_list *members,
                             const ns_nc_info *info, const char *ncname);

/* INFO lines: the members verify checks by their SHA-256 only (logs, the report's files, other
 * checkpoint files) and provenance.json's fields it does not check. */
void ns_verify_members_unchecked(ns_vreport *v, const ns_archive_list *members,
                                 const char *ncname);

/* The asset manifests names are checked against: the archive's assets-manifest.json and this
 * build's (either may be missing). */
typedef struct ns_verify_manifests {
    ns_manifest archived, here;
    int have_archived, have_here;
} ns_verify_manifests;

void ns_verify_manifests_load(ns_vreport *v, const char *dir, ns_verify_manifests *m);
void ns_verify_manifests_free(ns_verify_manifests *m);

/* The fallback the manifests give the set `name` (the archived manifest's first), or NULL. */
const char *ns_verify_fallback_of(const ns_verify_manifests *m, const char *name);

/* Whether an input recorded as used = `name` (a manifest set; "path" and "unknown" pass) with
 * SHA-256 `sha` is that set's: its main file's SHA-256 in the archived manifest, else this build's.
 * FAIL "KIND NAME: the recorded SHA-256 ... is not NAME's: MANIFEST lists ..." and 0 when not. */
int ns_verify_asset_claim(ns_vreport *v, const ns_verify_manifests *m, const char *kind,
                          const char *name, const char *sha);

#endif
