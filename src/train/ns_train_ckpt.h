/* ns_train_ckpt: the trainer's checkpoint, one file (CHECKPOINT_DIR/state.bin): the options that
 * define the run (JSON, compared on --resume), the steps completed, the parameters, AdamW's two
 * moments and the log so far -- everything the next step depends on, so an interrupted run that is
 * resumed gives the same bytes as one that was not. Written under a temporary name, fsync'ed,
 * sealed with the SHA-256 of its content and renamed into place; a damaged file is refused.
 *
 * Layout (little-endian): "NSTRCKP1", u64 n, n bytes of JSON {"format", "step", "floats",
 * "log_width", "log_steps", "log_evals", "options"}, zero padding to 8 bytes, floats params, m, v,
 * doubles log rows then evaluations, and "\nsha256 " + 64 hex digits of everything before. */
#ifndef NS_TRAIN_CKPT_H
#define NS_TRAIN_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "train/ns_train_log.h"

#define NS_TRAIN_CKPT_FILE "state.bin"

/* Save to path. options_json: one JSON object describing the run. */
int ns_train_ckpt_save(const char *path, const char *options_json, uint64_t step, size_t n,
                       const float *params, const float *m, const float *v, const ns_train_log *log,
                       ns_err *err);

/* Load path into params, m, v (n floats each) and log (initialised for the model's layers, empty);
 * *step receives the steps completed. NS_ERR_INVALID naming the first differing option when the
 * file's options are not options_json; NS_ERR_FORMAT for a damaged file. */
int ns_train_ckpt_load(const char *path, const char *options_json, uint64_t *step, size_t n,
                       float *params, float *m, float *v, ns_train_log *log, ns_err *err);

#endif
