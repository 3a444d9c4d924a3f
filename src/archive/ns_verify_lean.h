/* ns_verify_lean: the journal of a lean archive (`archive --lean`, which leaves it out), made
 * again by `verify`: every task recomputed from the model by the rows stage the sweep's ranks
 * use and appended to a journal of the sweep's identity in the extraction directory, so that the
 * reduction and the byte comparison with the NetCDF file that follow are those of an archive that
 * carries its journal (docs/ARCHIVE.md, "Lean archives"). Progress goes through the report's
 * callback; the journal's size is checked against the free space first. */
#ifndef NS_VERIFY_LEAN_H
#define NS_VERIFY_LEAN_H

#include "archive/ns_verify_report.h"
#include "corpus/ns_corpus.h"
#include "model/ns_model.h"
#include "rows/ns_plan.h"
#include "journal/ns_journal.h"
#include "reduce/ns_results.h"
#include "spec/ns_sweep_config.h"

/* Recompute every task of cfg (plan, model, corpus) into a new journal dir/recomputed/journal.nsj
 * identified by hash; *journal receives it (caller closes), res (initialised for cfg's shards)
 * every task's location. *ok 0 (a FAIL line said why) when the journal does not fit the free
 * space of dir. Errors: NS_ERR_NOMEM, NS_ERR_IO. */
int ns_verify_lean_journal(ns_vreport *v, const char *dir, const ns_sweep_config *cfg,
                           const ns_plan *plan, const ns_model *model,
                           const ns_corpus *corpus, const char *hash, ns_journal **journal,
                           ns_results *res, int *ok, ns_err *err);

#endif
