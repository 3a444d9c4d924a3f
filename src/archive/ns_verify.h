/* ns_verify: verification of reproducibility archives (`normsweep verify`): manifest, recorded
 * inputs, and recomputation of sampled tasks with the sweep's own task runner (one process, no
 * MPI). Conventions: docs/ARCHIVE.md. */
#ifndef NS_VERIFY_H
#define NS_VERIFY_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/ns_error.h"

#include "archive/ns_run_archive.h"
#include "archive/ns_verify_report.h"

#define NS_VERIFY_DEFAULT_SAMPLE 3
#define NS_VERIFY_DEFAULT_SEED 20250821u
/* Relative tolerance across builds / BLAS libraries: see docs/ARCHIVE.md for the derivation. */
#define NS_VERIFY_DEFAULT_TOLERANCE 1e-4

/* The extraction directory: TMPDIR/normsweep-verify.<pid>.XXXXXX (common/ns_tmp). */
#define NS_VERIFY_TMP_PREFIX "normsweep-verify"

/* Verify o->archive, reporting one "PASS|FAIL|SKIP|INFO" line per check through o->report:
 * the manifest, the sweep text, the inputs' SHA-256, the journal, every data variable of the
 * NetCDF file against the reduction recomputed from the journal, and sampled tasks recomputed
 * from the model.
 * Returns NS_OK when the verification ran (s->failed counts the differences found), or an error
 * when the archive is unusable (unreadable, not a tar.gz, unsafe member names, no NetCDF, a sweep
 * text that does not parse: NS_ERR_IO / NS_ERR_FORMAT / NS_ERR_INVALID) or on a runtime failure
 * (NS_ERR_NOMEM, NS_ERR_LIBRARY). */
int ns_verify(const ns_verify_options *o, ns_verify_summary *s, ns_err *err);

/* Compare two payloads of n doubles. exact: bit-identical; else |a-b| <= tol * max(|a|,|b|,1)
 * with NaN matching NaN and infinities matching themselves. Returns the number of differing
 * values; *first (may be NULL) the index of the first (n when none). */
size_t ns_verify_compare(const double *a, const double *b, size_t n, int exact, double tol,
                         size_t *first);

#endif
