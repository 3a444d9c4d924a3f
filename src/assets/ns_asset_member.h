/* ns_asset_member: extract one member of a tar (gzip, xz, ... compressed) archive into a new file
 * (internal to assets: manifest files that ship inside a package, such as an npm tarball). */
#ifndef NS_ASSET_MEMBER_H
#define NS_ASSET_MEMBER_H

#include "common/ns_error.h"

/* Write the regular-file member named member (exact path inside the archive) of archive_path to
 * the new file dest (created 0644, fsync'ed; removed again on failure). max_bytes >= 0 refuses a
 * larger member. NS_ERR_FORMAT when the archive is damaged, the member is missing, not a regular
 * file or appears twice. */
int ns_assets_extract_member(const char *archive_path, const char *member, const char *dest,
                             long long max_bytes, ns_err *err);

/* Extract member of archive_path to a temporary beside dest, check its SHA-256 against want_sha
 * ("" accepts any; the sum is returned in sha) and size (-1: any), and rename it to dest.
 * what names the file in messages ("set/file"). NS_ERR_CHECKSUM on a mismatch; nothing is left
 * behind on failure. */
int ns_assets_place_member(const char *archive_path, const char *member, const char *dest,
                           const char *want_sha, long long size, const char *what, char sha[65],
                           ns_err *err);

#endif
