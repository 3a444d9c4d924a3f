/* ns_dump_run: `normsweep dump` as one library function (docs/DUMP.md) -- one window of a text
 * through the same stages as a sweep: the corpus stage (read, check, strip the Gutenberg header as
 * the sweep does, tokenize), the rows stage (one forward pass, every layer's and head's last row
 * analysed with the sweep's defaults and checks), written to NetCDF (io/ns_nc_dump) with the
 * window's attention weights and value vectors. It neither prints, nor handles signals, nor
 * exits: lines go through the caller's hooks (common/ns_hooks.h), errors come back in ns_err. */
#ifndef NS_DUMP_RUN_H
#define NS_DUMP_RUN_H

#include <stddef.h>

#include "common/ns_error.h"
#include "common/ns_hooks.h"
#include "spec/ns_sweep_config.h"

/* What `normsweep dump` was asked (its options, parsed and checked by the caller). */
typedef struct ns_dump_options {
    const char *text;         /* --text: the text, read and tokenized as a sweep's corpus */
    size_t offset, length;    /* --offset, --length: tokens [offset, offset + length) of it */
    const char *out;          /* --out: the NetCDF file (replaced if it exists) */
    const char *model;        /* --model: a directory, else an asset name; NULL: the sweep's */
    const char *tokenizer;    /* --tokenizer: likewise */
    int logits;               /* --logits: also the pre-softmax scores */
    int metrics;              /* --N given: the metrics of the window's last row are written */
    ns_sweep_config cfg;      /* the analysis settings: the sweep's defaults (ns_sweep_config_init)
                                 with dump's options (N, T, eps, the normalizer with its view and
                                 parameter, sphere, seed, probes, strip_gutenberg); ns_dump_run
                                 works on a copy */
    const char *command_line; /* recorded in the file's provenance */
} ns_dump_options;

/* Run the dump of o: the cheap checks first (--out's directory exists and is writable, the text
 * and the tokenizer are read, the window fits the text, --out is none of the inputs, the model's
 * shape, the grid and the memory), then the forward pass, each layer's attention written as it
 * comes, the metrics (o->metrics) and the file completed: it is written under a temporary name
 * and renamed when complete, never half-written. hooks (may be NULL): line and user receive the
 * asset resolver's lines; stop, checked at each layer, stops the run (NS_ERR_INTERRUPTED, the
 * temporary removed); hold is called at "temp" (count 0) once the temporary exists. Returns
 * NS_OK, or NS_ERR_INVALID (bad input found before any work: a message naming the option, the
 * file and the cause), NS_ERR_INTERRUPTED, NS_ERR_IO, NS_ERR_NOMEM, ... with err filled. */
int ns_dump_run(const ns_dump_options *o, const ns_hooks *hooks, ns_err *err);

#endif
