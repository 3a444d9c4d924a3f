/* ns_file: whole-file reads, read-only memory maps, atomic writes, directory creation and the
 * small path/string helpers that go with them.
 *
 * Every function returns an ns_status and fills err with the path and strerror on failure.
 * Ownership is stated per function; nothing here keeps global state. */
#ifndef NS_FILE_H
#define NS_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

/* Read a whole file into a fresh NUL-terminated buffer (*data, caller frees; *len excludes
 * the NUL). Refuses files larger than max_bytes (0 = no limit) with NS_ERR_INVALID. */
int ns_file_read_all(const char *path, size_t max_bytes, char **data, size_t *len, ns_err *err);

/* Open path read-only when it is a regular file (a FIFO, device, socket or directory is refused
 * at once, naming what it is, instead of blocking); *fd is the caller's to close. */
int ns_file_open_regular(const char *path, int *fd, ns_err *err);

/* A read-only, shared memory map of a whole file. */
typedef struct ns_mmap {
    const uint8_t *data; /* NULL for an empty file */
    size_t size;
    int fd;
} ns_mmap;

/* Map path read-only (MAP_SHARED, so ranks on one node share the pages). */
int ns_mmap_open(const char *path, ns_mmap *map, ns_err *err);
/* Unmap and close; safe on a zeroed or already-closed map. */
void ns_mmap_close(ns_mmap *map);

/* Write len bytes to path atomically: a temporary file in the same directory is written,
 * fsync'ed, then renamed over path (and the directory fsync'ed). On failure path is
 * untouched and the temporary is removed. */
int ns_file_write_atomic(const char *path, const void *data, size_t len, ns_err *err);

/* "path.tmp.<pid>" style temporary name beside path (caller frees). NULL on ENOMEM. */
char *ns_file_temp_name(const char *path);

/* fsync the directory that contains path (so a rename in it is durable). */
int ns_file_sync_parent_dir(const char *path, ns_err *err);

/* mkdir -p with mode 0755. Existing directories are fine. */
int ns_file_mkdirs(const char *path, ns_err *err);

/* 1 if path exists (any type), else 0. */
int ns_file_exists(const char *path);
/* 1 if path is a directory / a regular file (symlinks followed), else 0. */
int ns_file_is_dir(const char *path);
int ns_file_is_regular(const char *path);

/* 1 if s ends with suffix. */
int ns_str_ends_with(const char *s, const char *suffix);
/* A freshly allocated printf-formatted string (caller frees); NULL on ENOMEM. */
char *ns_str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Join a directory and a file name into a fresh string (caller frees); NULL on ENOMEM. */
char *ns_path_join(const char *dir, const char *name);

#endif
