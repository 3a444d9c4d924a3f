#!/usr/bin/python3
"""golden.py: the reference ids the tokenizer.json tests keep (tests/data/tokref/golden.json)
and the comparison of normsweep's ids with them.

    golden.py make ASSETS OUT.json     run the reference (node tests/tokref/ref.js with the
                                       `tokref` asset) on War and Peace -- the raw file and its
                                       Gutenberg body -- and on the hard strings, for every
                                       tokenizer.json asset, and write the digests: the number of
                                       ids, the SHA-256 of the ids as little-endian int32, 256 ids
                                       at five places, and every hard string's ids
    golden.py strip TEXT OUT           write TEXT's Project Gutenberg body (an independent
                                       implementation of strip_gutenberg: true)
    golden.py check GOLDEN TOKENIZER TEXT IDS
                                       compare normsweep's ids (IDS: one per line) of TEXT
                                       (war_and_peace or war_and_peace_stripped) with GOLDEN;
                                       exit 1 naming the first difference
    golden.py hard GOLDEN TOKENIZER OUT.json   write the hard strings of GOLDEN (a JSON array)
    golden.py check-hard GOLDEN TOKENIZER IDS  compare tok_batch's lines with the golden ids

Regenerate with tests/tokref/regen.sh.
"""
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOKENIZERS = ["qwen3-tokenizer", "llama3-tokenizer", "claude-tokenizer"]
WINDOW = 256


def gutenberg_body(text):
    start = re.search(r"^[ \t]*\*\*\* *START +OF\b.*PROJECT GUTENBERG EBOOK.*$", text,
                      re.M | re.I)
    if not start:
        sys.exit("golden.py: no START marker")
    body = text.index("\n", start.end()) + 1 if "\n" in text[start.end():] else len(text)
    end = re.compile(r"^[ \t]*\*\*\* *END +OF\b.*PROJECT GUTENBERG EBOOK", re.M | re.I).search(
        text, body)
    if not end:
        sys.exit("golden.py: no END marker")
    return text[body:end.start()]


def digest(ids):
    raw = struct.pack("<%di" % len(ids), *ids)
    n = len(ids)
    places = sorted({0, n // 4, n // 2, 3 * n // 4, max(0, n - WINDOW)})
    return {"count": n, "sha256": hashlib.sha256(raw).hexdigest(),
            "windows": {str(p): ids[p:p + WINDOW] for p in places}}


def node_ref(args):
    r = subprocess.run(["node", os.path.join(HERE, "ref.js")] + args, capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit("golden.py: the reference failed: %s" % r.stderr.strip())
    return r


def make(assets, out):
    tokref = os.path.join(assets, "tokref")
    corpus = os.path.join(assets, "corpus", "war_and_peace.txt")
    with open(corpus, encoding="utf-8") as f:
        raw = f.read()
    hard = json.loads(subprocess.run([sys.executable, os.path.join(HERE, "strings.py"), "hard"],
                                     capture_output=True, text=True, check=True).stdout)
    g = {"reference": "Hugging Face tokenizers 0.23.2 (Rust, its Node binding; npm), "
                      "encode(text, add_special_tokens=False)",
         "corpus_sha256": hashlib.sha256(raw.encode("utf-8")).hexdigest(),
         "hard_strings": hard, "tokenizers": {}}
    with tempfile.TemporaryDirectory() as tmp:
        texts = {"war_and_peace": corpus, "war_and_peace_stripped": os.path.join(tmp, "body.txt")}
        with open(texts["war_and_peace_stripped"], "w", encoding="utf-8") as f:
            f.write(gutenberg_body(raw))
        hard_path = os.path.join(tmp, "hard.json")
        with open(hard_path, "w", encoding="utf-8") as f:
            json.dump(hard, f, ensure_ascii=False)
        for name in TOKENIZERS:
            tj = os.path.join(assets, name, "tokenizer.json")
            with open(tj, "rb") as f:
                entry = {"tokenizer_sha256": hashlib.sha256(f.read()).hexdigest(), "texts": {}}
            for tname, path in texts.items():
                ids_path = os.path.join(tmp, "ids.i32")
                r = node_ref(["file", tokref, tj, path, ids_path])
                with open(ids_path, "rb") as f:
                    data = f.read()
                ids = list(struct.unpack("<%di" % (len(data) // 4), data))
                entry["texts"][tname] = digest(ids)
                entry["texts"][tname]["javascript"] = r.stderr.strip()
                print("%s %s: %d ids; %s" % (name, tname, len(ids), r.stderr.strip()))
            r = node_ref(["strings", tokref, tj, hard_path])
            entry["hard"] = [[int(x) for x in line.split()] for line in r.stdout.split("\n")[:-1]]
            g["tokenizers"][name] = entry
    with open(out, "w", encoding="utf-8") as f:
        json.dump(g, f, ensure_ascii=True, indent=0)
        f.write("\n")


def check(golden, name, text, ids_path):
    with open(golden, encoding="utf-8") as f:
        want = json.load(f)["tokenizers"][name]["texts"][text]
    with open(ids_path) as f:
        ids = [int(x) for x in f.read().split()]
    got = digest(ids)
    bad = []
    if got["count"] != want["count"]:
        bad.append("%d ids, the reference has %d" % (got["count"], want["count"]))
    for p, w in want["windows"].items():
        g = ids[int(p):int(p) + WINDOW]
        if g != w:
            k = next((i for i in range(min(len(g), len(w))) if g[i] != w[i]), min(len(g), len(w)))
            bad.append("id %d: %s, the reference has %s" % (int(p) + k, g[k:k + 5], w[k:k + 5]))
    if got["sha256"] != want["sha256"]:
        bad.append("sha256 of the ids %s, the reference's %s" % (got["sha256"], want["sha256"]))
    if bad:
        print("%s %s: differs from the reference: %s" % (name, text, "; ".join(bad)))
        return 1
    print("%s %s: %d ids, sha256 %s: the reference's" % (name, text, got["count"], got["sha256"]))
    return 0


def check_hard(golden, name, out_path):
    with open(golden, encoding="utf-8") as f:
        g = json.load(f)
    with open(out_path) as f:
        lines = f.read().split("\n")[:-1]
    want = g["tokenizers"][name]["hard"]
    bad = 0
    for i, (s, w) in enumerate(zip(g["hard_strings"], want)):
        got = lines[i].split() if i < len(lines) else ["(missing)"]
        if got != [str(x) for x in w]:
            bad += 1
            if bad <= 5:
                print("%s: hard string %d %r: %s, the reference has %s" % (name, i, s[:40],
                      " ".join(got)[:80], " ".join(map(str, w))[:80]))
    if len(lines) != len(want):
        print("%s: %d results for %d hard strings" % (name, len(lines), len(want)))
        bad += 1
    print("%s: %d hard strings, %d differ from the reference" % (name, len(want), bad))
    return 1 if bad else 0


def main():
    a = sys.argv[1:]
    if a[:1] == ["make"] and len(a) == 3:
        make(a[1], a[2])
    elif a[:1] == ["strip"] and len(a) == 3:
        with open(a[1], encoding="utf-8") as f:
            body = gutenberg_body(f.read())
        with open(a[2], "w", encoding="utf-8") as f:
            f.write(body)
    elif a[:1] == ["check"] and len(a) == 5:
        sys.exit(check(a[1], a[2], a[3], a[4]))
    elif a[:1] == ["hard"] and len(a) == 4:
        with open(a[1], encoding="utf-8") as f:
            json.dump(json.load(f)["hard_strings"], open(a[3], "w", encoding="utf-8"),
                      ensure_ascii=False)
    elif a[:1] == ["check-hard"] and len(a) == 4:
        sys.exit(check_hard(a[1], a[2], a[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
