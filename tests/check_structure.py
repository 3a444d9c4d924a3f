#!/usr/bin/python3
"""check_structure.py SRC_DIR [GENERATED_DIR...]: the structural rules of docs/STRUCTURE.md, checked on the code.

1. Only src/cli initialises MPI, installs signal handlers and exits (MPI_Init, sigaction,
   signal(), exit(), _Exit(), abort() appear nowhere else).
2. No library file prints: stdout, stderr, printf, puts, perror appear only under src/cli.
3. No function in src/ is longer than MAX_LINES lines (from its opening to its closing brace).
4. No circle between two files of one module: file a uses file b (includes b.h) and b uses a.
5. Every public function (declared in a header under src/) is called by the program: its name
   appears in src/ outside its own declaration and definition.
Prints every breach and exits 1 when there is one.
"""
import os
import re
import sys

MAX_LINES = 150


def sources(top):
    for d, _, files in os.walk(top):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"__attribute__\(\(format\(printf[^)]*\)\)\)", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def main(top):
    bad = []
    files = {p: strip_comments_and_strings(open(p, encoding="utf-8").read()) for p in sources(top)}
    for p, text in files.items():
        rel = os.path.relpath(p, os.path.dirname(top))
        in_cli = "/cli/" in p
        for n, line in enumerate(text.split("\n"), 1):
            if not in_cli:
                if re.search(r"\b(MPI_Init(_thread)?|sigaction|signal|exit|_Exit|abort)\s*\(", line):
                    bad.append(f"{rel}:{n}: process control outside src/cli: {line.strip()}")
                if re.search(r"\b(stdout|stderr|printf|vprintf|puts|perror)\b", line):
                    bad.append(f"{rel}:{n}: prints outside src/cli: {line.strip()}")
        if p.endswith(".c"):
            lines = text.split("\n")
            start = None
            for n, line in enumerate(lines, 1):
                if line.startswith("{"):
                    start = n
                elif line.startswith("}") and start is not None:
                    if n - start + 1 > MAX_LINES:
                        bad.append(f"{rel}:{start}: a function of {n - start + 1} lines "
                                   f"(at most {MAX_LINES})")
                    start = None
    # 4. circles between two files of one module (a file = a stem: x.c + x.h)
    # (x_internal.h is x's private companion: the same file for this rule)
    def group(name):
        return name[:-len("_internal")] if name.endswith("_internal") else name
    uses = {}
    for p, text in files.items():
        mod = os.path.basename(os.path.dirname(p))
        stem = group(os.path.splitext(os.path.basename(p))[0])
        for inc in re.findall(r'#include\s+"([a-z_]+)/([a-z0-9_]+)\.h"', open(p).read()):
            if inc[0] == mod and group(inc[1]) != stem:
                uses.setdefault((mod, stem), set()).add(group(inc[1]))
    for (mod, a), bs in sorted(uses.items()):
        for b in sorted(bs):
            if a < b and a in uses.get((mod, b), set()):
                bad.append(f"src/{mod}: {a} and {b} use each other (a circle)")
    # 5. public functions nobody calls (headers named *_internal.h are module-private: what the
    # module's own files and tests share; generated sources count as the program)
    allsrc = "\n".join(files.values())
    for extra in sys.argv[2:]:
        allsrc += "\n".join(strip_comments_and_strings(open(f).read()) for f in sources(extra))
    for p, text in files.items():
        if not p.endswith(".h") or p.endswith("_internal.h"):
            continue
        for name in re.findall(r"^[A-Za-z_][\w \*]*?\b(ns_\w+)\s*\(", text, flags=re.M):
            uses_n = len(re.findall(r"\b%s\b" % re.escape(name), allsrc))
            if uses_n < 3:  # declaration, definition, and at least one use
                bad.append(f"{os.path.relpath(p, os.path.dirname(top))}: public {name}() is never "
                           "used by the program")
    for b in bad:
        print(b)
    print(f"check_structure: {len(files)} files, {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "src"))
