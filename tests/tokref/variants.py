#!/usr/bin/python3
"""variants.py: tokenizer.json files built for the tests from GPT-2's encoder.json + vocab.bpe
(or a small synthetic vocabulary), one per option the tokenizer.json loader implements.

    variants.py ENCODER_JSON VOCAB_BPE OUTDIR [NAME...]
                          writes OUTDIR/<name>/tokenizer.json for every variant (or those named)
                          and prints the names

`gpt2` is Hugging Face's own conversion of GPT-2 (ByteLevel pre-tokenizer with GPT-2's pattern,
<|endoftext|> an added special token): it must give the ids of GPT-2's files. The others change
one thing each: Split behaviours and invert, String patterns, patterns that match empty strings,
add_prefix_space, normalizers, added-token flags, ignore_merges, merges as pairs, and (on a small
vocabulary) byte_fallback, unk_token and fuse_unk.
"""
import copy
import json
import os
import sys


def byte_level(prefix=False, regex=True):
    return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True, "use_regex": regex}


def split(pattern, behavior, invert=False, literal=False):
    return {"type": "Split", "pattern": {"String" if literal else "Regex": pattern},
            "behavior": behavior, "invert": invert}


def seq(*steps):
    return {"type": "Sequence", "pretokenizers": list(steps)}


def added(i, content, special=True, lstrip=False, rstrip=False, normalized=False, single_word=False):
    return {"id": i, "content": content, "single_word": single_word, "lstrip": lstrip,
            "rstrip": rstrip, "normalized": normalized, "special": special}


def gpt2(encoder, vocab_bpe):
    with open(encoder, encoding="utf-8") as f:
        vocab = json.load(f)
    with open(vocab_bpe, encoding="utf-8") as f:
        merges = [l for l in f.read().split("\n") if l and not l.startswith("#version")]
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(50256, "<|endoftext|>")],
        "normalizer": None,
        "pre_tokenizer": byte_level(),
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                           "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "vocab": vocab, "merges": merges},
    }


def small():
    """A byte-level vocabulary of a few letters only: other bytes need byte_fallback or unk."""
    vocab = {"<unk>": 0}
    for c in "abcdefghijklmnopqrstuvwxyz\u0120":
        vocab[c] = len(vocab)
    for code in ["<0x%02X>" % b for b in (0xC3, 0xA9, 0xC4, 0xA0, 0x31)]:
        vocab[code] = len(vocab)
    merges = ["t h", "th e", "\u0120 th", "a n", "an d", "\u0120 a", "e r"]
    for m in merges:
        vocab[m.replace(" ", "")] = len(vocab)
    t = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
         "normalizer": None, "pre_tokenizer": byte_level(), "post_processor": None,
         "decoder": None,
         "model": {"type": "BPE", "dropout": None, "unk_token": None,
                   "continuing_subword_prefix": None, "end_of_word_suffix": None,
                   "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                   "vocab": vocab, "merges": merges}}
    return t


def variants(base):
    v = {}
    v["gpt2"] = base

    def with_pre(name, pre):
        t = copy.deepcopy(base)
        t["pre_tokenizer"] = pre
        v[name] = t

    with_pre("prefix_space", byte_level(prefix=True))
    with_pre("no_regex", seq(split(r"\s+", "Isolated"), byte_level(regex=False)))
    with_pre("removed", seq(split(" ", "Removed", literal=True), byte_level(prefix=True, regex=False)))
    with_pre("merged_prev", seq(split(r"[\s,.!?]+", "MergedWithPrevious"), byte_level(regex=False)))
    with_pre("merged_next", seq(split(r"[\s'(]", "MergedWithNext"), byte_level(regex=False)))
    with_pre("contiguous", seq(split(r"\p{P}", "Contiguous"), byte_level()))
    with_pre("invert", seq(split(r"\p{L}+|\p{N}", "Isolated", invert=True), byte_level(regex=False)))
    with_pre("invert_removed", seq(split(r"\s+", "Removed", invert=True), byte_level(regex=False)))
    with_pre("string_isolated", seq(split("th", "Isolated", literal=True), byte_level()))
    with_pre("empty_matches", seq(split(r"a*", "Isolated"), byte_level(regex=False)))
    with_pre("lookbehind", seq(split(r"(?<=[a-z])(?=[A-Z])|\d+", "Isolated"), byte_level(regex=False)))
    with_pre("nested", seq(seq(split(r"\n", "MergedWithPrevious"), split(r"(?i:the)", "Isolated")),
                           byte_level(prefix=True)))
    t = copy.deepcopy(base)
    t["normalizer"] = {"type": "NFKC"}
    v["nfkc"] = t
    t = copy.deepcopy(base)
    t["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "NFC"}]}
    v["nfd_nfc"] = t
    t = copy.deepcopy(base)
    t["normalizer"] = {"type": "NFKD"}
    more = [("\ufb01x", dict(special=False, normalized=True)), ("<mask>", dict(lstrip=True, rstrip=True)),
            ("hello", dict(special=False, single_word=True)),
            ("Caf\u00e9", dict(special=False, normalized=True)), (" sp", dict(special=False, lstrip=True)),
            ("<|endoftext|><|endoftext|>", {}), ("Hello", dict(special=False, rstrip=True))]
    next_id = len(t["model"]["vocab"])
    for content, flags in more:  # the ids Hugging Face gives: the vocabulary's, else the next
        i = t["model"]["vocab"].get(content)
        if i is None:
            i, next_id = next_id, next_id + 1
        t["added_tokens"].append(added(i, content, **flags))
    v["added_flags"] = t
    t = copy.deepcopy(base)
    t["model"]["ignore_merges"] = True
    v["ignore_merges"] = t
    t = copy.deepcopy(base)
    t["model"]["merges"] = [m.split(" ") for m in t["model"]["merges"]]
    v["merges_pairs"] = t
    s = small()
    v["small_drop"] = s
    for name, opts in [("small_fallback", {"byte_fallback": True}),
                       ("small_unk", {"unk_token": "<unk>"}),
                       ("small_unk_fused", {"unk_token": "<unk>", "fuse_unk": True}),
                       ("small_fallback_unk", {"byte_fallback": True, "unk_token": "<unk>"})]:
        t = copy.deepcopy(s)
        t["model"].update(opts)
        v[name] = t
    return v


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    base = gpt2(sys.argv[1], sys.argv[2])
    for name, t in variants(base).items():
        if sys.argv[4:] and name not in sys.argv[4:]:
            continue
        d = os.path.join(sys.argv[3], name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(t, f, ensure_ascii=False)
        print(name)


if __name__ == "__main__":
    main()
