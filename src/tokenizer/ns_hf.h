/* ns_hf: the parts of a Hugging Face tokenizer.json that a byte-level BPE needs beyond GPT-2's
 * files -- normalizer, pre-tokenizer steps (Split, ByteLevel, Sequence), added tokens, the BPE
 * model's options and the BOS the post-processor adds -- loaded from the file (every key is
 * read; what is not implemented is refused) and applied as Hugging Face's `tokenizers` does.
 * Internal to src/tokenizer (shared by its sources and its unit test). */
#ifndef NS_HF_H
#define NS_HF_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

typedef struct ns_tokenizer ns_tokenizer;
typedef struct ns_tokens ns_tokens;

/* utf8proc option sets of the normalizers implemented (NFC, NFD, NFKC, NFKD). */
#define NS_HF_MAX_NORMS 8

/* How a Split step treats its pattern's matches (SplitDelimiterBehavior). */
enum ns_hf_behavior {
    NS_HF_REMOVED,
    NS_HF_ISOLATED,
    NS_HF_MERGED_WITH_PREVIOUS,
    NS_HF_MERGED_WITH_NEXT,
    NS_HF_CONTIGUOUS
};

/* One pre-tokenizer step: a Split, or the ByteLevel step (which is always the last). */
typedef struct ns_hf_step {
    int byte_level;        /* 1: ByteLevel; 0: Split */
    pcre2_code *re;        /* Split's pattern, or GPT-2's pattern for ByteLevel with use_regex */
    int behavior;          /* Split: enum ns_hf_behavior */
    int invert;            /* Split: the gaps are the matches */
    int add_prefix_space;  /* ByteLevel: prepend ' ' to a piece that does not start with one */
} ns_hf_step;

/* One added token (tokenizer.json "added_tokens"), with the id Hugging Face gives it. */
typedef struct ns_hf_added {
    char *content;         /* UTF-8 (matched against the raw or the normalized text) */
    size_t len;
    char *match;           /* what is matched: content, or its normalized form when normalized */
    size_t match_len;
    int32_t id;
    int special, lstrip, rstrip, normalized, single_word;
} ns_hf_added;

/* A byte trie of added-token contents, searched leftmost-longest (as daachorse's
 * LeftmostLongest matcher that Hugging Face uses). */
typedef struct ns_hf_trie {
    uint64_t *keys;        /* (node << 8 | byte) + 1 per slot, 0 empty */
    uint32_t *child;
    size_t mask;
    int32_t *term;         /* per node: index into the added-token array + 1, 0 none */
    size_t n_nodes, cap_nodes;
    uint8_t first[32];     /* bitmap of first bytes */
} ns_hf_trie;

/* Per-byte initial symbols of a pre-token: the vocabulary id of the byte's character, or its
 * byte-fallback tokens, or the unknown token, or nothing (Hugging Face drops it). */
enum ns_hf_byte_kind { NS_HF_BYTE_NONE, NS_HF_BYTE_VOCAB, NS_HF_BYTE_FALLBACK, NS_HF_BYTE_UNK };
typedef struct ns_hf_byte {
    int32_t id[2];
    uint8_t n;             /* number of ids */
    uint8_t kind;          /* enum ns_hf_byte_kind */
} ns_hf_byte;

typedef struct ns_hf {
    int norm_opts[NS_HF_MAX_NORMS]; /* utf8proc_map options, applied in order */
    int n_norms;
    ns_hf_step *steps;
    size_t n_steps;
    ns_hf_added *added;
    size_t n_added;
    ns_hf_trie trie_raw;   /* non-normalized added tokens, matched in the raw text */
    ns_hf_trie trie_norm;  /* normalized ones, matched in the normalized pieces */
    int ignore_merges;
    int fuse_unk;
    ns_hf_byte bytes[256];
    size_t model_vocab;    /* entries of model.vocab (Hugging Face's BPE vocab size) */
    int32_t bos_id;        /* -1: none */
    int bos_added;         /* 1: the post-processor prepends it (add_special_tokens=True) */
    char bos_source[64];   /* "post_processor", "tokenizer_config.json", "" */
    size_t n_prefix, n_suffix; /* tokens the post-processor adds before and after a sequence */
    pcre2_code *re_word;   /* one Unicode word character (Rust regex \w) */
    pcre2_code *re_space;  /* one White_Space character (Rust regex \s) */
} ns_hf;

/* Load the tokenizer.json at path (and the BOS from a tokenizer_config.json beside it). */
int ns_hf_load_file(const char *path, ns_tokenizer **out, ns_err *err);
/* The same from the file's text already in memory (no tokenizer_config.json; the fuzz target). */
int ns_hf_load_text(const char *path, const char *text, size_t len, ns_tokenizer **out,
                    ns_err *err);
/* The bytes id decodes to (an added token's content; NULL for an id without a token). */
const char *ns_hf_token_bytes(const ns_tokenizer *tok, int32_t id, size_t *len);

/* Parse path's JSON text (already read) into tok: vocabulary, merges, options. Every error
 * names path and the key. */
int ns_hf_load(ns_tokenizer *tok, const char *path, const char *text, size_t len, ns_err *err);
void ns_hf_free(ns_hf *hf);

/* The configuration parts (ns_hf_config.c): normalizer, pre_tokenizer, post_processor, decoder;
 * key is the member's name, used in messages with path. */
int ns_hf_parse_normalizer(ns_hf *hf, json_t *v, const char *path, ns_err *err);
int ns_hf_parse_pre_tokenizer(ns_hf *hf, json_t *v, const char *path, ns_err *err);
int ns_hf_parse_post_processor(ns_hf *hf, json_t *v, const char *path, ns_err *err);
int ns_hf_parse_decoder(json_t *v, const char *path, ns_err *err);

/* Keys of obj that are not in allowed (NULL-terminated) are refused: "path: where: unknown key
 * \"k\" (not implemented by normsweep)". */
int ns_hf_check_keys(json_t *obj, const char *const *allowed, const char *path, const char *where,
                     ns_err *err);
/* Optional boolean member (absent or null: def). */
int ns_hf_get_bool(json_t *obj, const char *key, int def, int *out, const char *path,
                   const char *where, ns_err *err);

/* Compile a pattern written for Oniguruma (Hugging Face's regex engine) with PCRE2 in UTF mode:
 * \s, \S, \w, \W, \h, \H and \uHHHH are rewritten to PCRE2's spelling of Oniguruma's meaning;
 * constructs whose meaning differs and that are not rewritten are refused. literal: the pattern
 * is a plain string (Split's {"String": ...}). where names the key in messages. */
int ns_hf_compile(const char *pattern, size_t len, int literal, pcre2_code **out, const char *path,
                  const char *where, ns_err *err);

/* Added tokens: build the two tries; find the next added token in s[from..n) as Hugging Face's
 * find_matches does (leftmost-longest, then single_word, lstrip, rstrip): returns 1 with the
 * token's index and the span [*start, *stop) it covers, 0 when there is none. *scan is where
 * the search resumes (the end of the match found, stripped whitespace excluded). */
int ns_hf_trie_build(ns_hf_trie *t, const ns_hf_added *added, size_t n, int normalized,
                     ns_err *err);
void ns_hf_trie_free(ns_hf_trie *t);
int ns_hf_next_added(const ns_hf *hf, const ns_hf_trie *t, const char *s, size_t n, size_t *scan,
                     size_t done, size_t *start, size_t *stop, size_t *index);

/* Apply the normalizers to s[0..n): *out (malloc'd, caller frees) and *out_len; NS_ERR_NOMEM or
 * NS_ERR_LIBRARY (utf8proc) on failure. */
int ns_hf_normalize(const ns_hf *hf, const char *s, size_t n, char **out, size_t *out_len,
                    ns_err *err);

/* Encode text[0..len) with tok's tokenizer.json pipeline, appending to out. Invalid UTF-8 is
 * refused (NS_ERR_INVALID naming the byte offset): Hugging Face tokenizers take Unicode text. */
int ns_hf_encode(const ns_tokenizer *tok, const char *text, size_t len, ns_tokens *out, ns_err *err);

/* Offset of the first invalid UTF-8 sequence in s[0..n), or n when it is all valid. */
size_t ns_utf8_invalid_at(const char *s, size_t n);

#endif
