/* ns_journal_parts: a journal's part files, journal.s<S>.r<R>.nsj (see ns_journal.h): their
 * names, finding and scanning them, creating one, and the locations of their records. */
#include "journal/ns_journal_parts_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ns_file.h"

static char *part_name(uint32_t segment, uint32_t rank)
{
    return ns_str_printf(NS_JOURNAL_PART_PREFIX "%u.r%u.nsj", segment, rank);
}

/* Add part (segment, rank) to j's parts, closed; *file receives its file number. */
static int add_part(ns_journal *j, uint32_t segment, uint32_t rank, uint64_t *file, ns_err *err)
{
    jparts *ps = j->parts;
    if (ps->n + 1 >= J_MAX_FILES)
        return ns_fail(err, NS_ERR_INVALID, "journal %s: more than %llu files", j->dir,
                       (unsigned long long)J_MAX_FILES - 1);
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 16;
        jpart *p = realloc(ps->p, cap * sizeof *p);
        if (p)
            ps->p = p;
        uint32_t *ids = realloc(ps->ids, 2 * cap * sizeof *ids);
        if (ids)
            ps->ids = ids;
        if (!p || !ids)
            return ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
        ps->cap = cap;
    }
    char *name = part_name(segment, rank);
    char *path = name ? ns_path_join(j->dir, name) : NULL;
    free(name);
    if (!path)
        return ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
    ps->p[ps->n] = (jpart){path, -1};
    ps->ids[2 * ps->n] = segment;
    ps->ids[2 * ps->n + 1] = rank;
    *file = ++ps->n;
    if (segment >= j->next_segment)
        j->next_segment = segment + 1;
    return NS_OK;
}

static int cmp_ids(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The part files in dir: (segment, rank) pairs in that order, by name "journal.s<S>.r<R>.nsj"
 * exactly as part_name writes it (*ids: caller frees). */
static int list_parts(const char *dir, uint32_t **ids, size_t *n, ns_err *err)
{
    *ids = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return ns_fail(err, NS_ERR_IO, "read directory %s: %s", dir, strerror(errno));
    size_t cap = 0;
    int rc = NS_OK;
    struct dirent *e;
    while (rc == NS_OK && (e = readdir(d))) {
        unsigned s, r;
        if (strncmp(e->d_name, NS_JOURNAL_PART_PREFIX, strlen(NS_JOURNAL_PART_PREFIX)) != 0 ||
            sscanf(e->d_name, NS_JOURNAL_PART_PREFIX "%u.r%u.nsj", &s, &r) != 2)
            continue;
        char *canon = part_name(s, r);
        int same = canon && strcmp(canon, e->d_name) == 0;
        free(canon);
        if (!same)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            uint32_t *p = realloc(*ids, 2 * cap * sizeof *p);
            if (!p) {
                rc = ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
                break;
            }
            *ids = p;
        }
        (*ids)[2 * *n] = s;
        (*ids)[2 * *n + 1] = r;
        (*n)++;
    }
    closedir(d);
    if (rc == NS_OK && *n)
        qsort(*ids, *n, 2 * sizeof **ids, cmp_ids);
    return rc;
}

int ns_journal_scan_part(ns_journal *j, uint64_t file, const unsigned char *want,
                         ns_journal_record_fn fn, void *user, ns_journal_scan *scan, ns_err *err)
{
    const char *path = j->parts->p[file - 1].path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ns_fail(err, NS_ERR_IO, "open %s: %s", path, strerror(errno));
    unsigned char have[J_HEADER_SIZE];
    size_t got = 0, torn = 0;
    off_t end;
    int rc = ns_journal_read_full(fd, have, sizeof have, &got) == 0
                 ? NS_OK
                 : ns_fail(err, NS_ERR_IO, "read %s: %s", path, strerror(errno));
    if (rc == NS_OK && got < sizeof have)
        torn = got;
    else if (rc == NS_OK && (rc = ns_journal_check_header(path, have, want, j->hash, err)) == NS_OK)
        rc = ns_journal_scan_records(j, fd, path, file, J_HEADER_SIZE, fn, user, &end, &torn, scan,
                                     err);
    close(fd);
    if (rc == NS_OK && torn)
        scan->torn_parts++;
    return rc;
}

int ns_journal_find_parts(ns_journal *j, int resume, ns_err *err)
{
    uint32_t *ids = NULL;
    size_t n = 0;
    NS_TRY(list_parts(j->dir, &ids, &n, err));
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        uint64_t file;
        if ((rc = add_part(j, ids[2 * i], ids[2 * i + 1], &file, err)) == NS_OK && !resume)
            rc = ns_fail(err, NS_ERR_INVALID,
                         "%s exists: pass --resume to continue that sweep, or remove it (or "
                         "choose another --checkpoint-dir) to start afresh",
                         j->parts->p[file - 1].path);
    }
    free(ids);
    return rc;
}

int ns_journal_create_part(const char *dir, const char *sweep_hash, size_t payload_len,
                           uint32_t segment, uint32_t rank, ns_journal **out, ns_err *err)
{
    *out = NULL;
    if (strlen(sweep_hash) != 64)
        return ns_fail(err, NS_ERR_INVALID, "journal: sweep hash must be 64 hex characters");
    ns_journal *j = ns_journal_new(dir, payload_len, err);
    if (!j)
        return NS_ERR_NOMEM;
    memcpy(j->hash, sweep_hash, 65);
    char *name = part_name(segment, rank);
    j->path = name ? ns_path_join(dir, name) : NULL;
    free(name);
    int rc = NS_OK;
    unsigned char want[J_HEADER_SIZE];
    ns_journal_make_header(want, sweep_hash, payload_len);
    if (!j->path)
        rc = ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
    else if ((j->fd = open(j->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
        rc = ns_fail(err, NS_ERR_IO, "create %s: %s", j->path, strerror(errno));
    else if ((rc = ns_journal_write_full(j->fd, want, sizeof want, j->path, err)) == NS_OK &&
             fsync(j->fd) != 0)
        rc = ns_fail(err, NS_ERR_IO, "fsync %s: %s", j->path, strerror(errno));
    if (rc == NS_OK)
        rc = ns_file_sync_parent_dir(j->path, err);
    if (rc != NS_OK) {
        ns_journal_close(j);
        return rc;
    }
    *out = j;
    return NS_OK;
}

int ns_journal_part_location(ns_journal *j, uint32_t segment, uint32_t rank,
                             uint64_t part_location, uint64_t *location, ns_err *err)
{
    jparts *ps = j->parts;
    uint64_t file = 0;
    for (size_t i = ps->n; i-- > 0 && !file;)
        if (ps->ids[2 * i] == segment && ps->ids[2 * i + 1] == rank)
            file = i + 1;
    if (!file)
        NS_TRY(add_part(j, segment, rank, &file, err));
    if (part_location >> J_OFFSET_BITS)
        return ns_fail(err, NS_ERR_INVALID, "journal: location %llu is not one of a part's own",
                       (unsigned long long)part_location);
    *location = file << J_OFFSET_BITS | part_location;
    return NS_OK;
}

int ns_journal_check_part(ns_journal *j, uint32_t segment, uint32_t rank, ns_err *err)
{
    uint64_t loc;
    size_t had = j->parts->n;
    NS_TRY(ns_journal_part_location(j, segment, rank, 0, &loc, err));
    jparts *ps = j->parts;
    /* opened only to check its header, and closed again: the part's writer has only begun, and a
     * file kept open now might show a network file system's cached view of it later; reads open
     * it afresh (file_of) */
    int fd = -1;
    unsigned char have[J_HEADER_SIZE];
    int rc = ns_journal_open_checked(ps->p[(loc >> J_OFFSET_BITS) - 1].path, j->payload_len,
                                     j->hash, &fd, have, err);
    if (rc == NS_OK)
        close(fd);
    else if (ps->n > had) /* not a part of j after all */
        free(ps->p[--ps->n].path);
    return rc;
}

size_t ns_journal_parts(const ns_journal *j, const uint32_t **ids)
{
    *ids = j->parts->ids;
    return j->parts->n;
}

int ns_journal_attach(const char *dir, size_t payload_len, const uint32_t *ids, size_t nparts,
                      ns_journal **out, ns_err *err)
{
    *out = NULL;
    ns_journal *j = ns_journal_new(dir, payload_len, err);
    if (!j)
        return NS_ERR_NOMEM;
    int rc = NS_OK;
    j->path = ns_path_join(dir, NS_JOURNAL_FILE);
    if (!j->path)
        rc = ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
    for (size_t i = 0; rc == NS_OK && i < nparts; i++) {
        uint64_t file;
        rc = add_part(j, ids[2 * i], ids[2 * i + 1], &file, err);
    }
    unsigned char have[J_HEADER_SIZE];
    if (rc == NS_OK &&
        (rc = ns_journal_open_checked(j->path, payload_len, "", &j->fd, have, err)) == NS_OK)
        memcpy(j->hash, have + 32, 64); /* every part must carry the same sweep */
    if (rc != NS_OK) {
        ns_journal_close(j);
        return rc;
    }
    *out = j;
    return NS_OK;
}
