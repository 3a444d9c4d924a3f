#!/usr/bin/python3
"""check_structure.py [options] SRC_DIR [GENERATED_DIR...]: the rules of docs/STRUCTURE.md, checked.

 1. Only src/cli initialises MPI, installs signal handlers and exits (MPI_Init, sigaction,
    signal(), exit(), _Exit(), abort() appear nowhere else).
 2. No library file prints: stdout, stderr, printf, puts, perror appear only under src/cli.
 3. No function is longer than MAX_LINES lines (from its { in column 0 to its } in column 0).
 4. No circle, of any length, among the units of one module. A unit is a file stem (x.c, x.h and
    x_internal.h are unit x; a header without a .c of its stem is a unit of its own). a -> b when a
    file of a includes b.h or b_internal.h, or when a .c of a (or a macro or inline function body
    in a header of a) names a function or object that a .c of b defines (not static). Every
    strongly connected component of two or more units is one breach, printed with one concrete
    cycle and every edge inside it.
 5. Every public function (declared in a header under src/, not *_internal.h) is used by the
    program: its name appears in src/ (or the generated sources) beyond its declaration and
    definition.
 6. Arrows: an #include "m/x.h" in src/n/ (m != n) needs m in n's "may include" cell of the
    modules table of docs/STRUCTURE.md (between <!-- modules --> markers). The table itself must
    be acyclic, have a row for every folder under src/, and name no unknown module.
 7. A private header m/x_internal.h is included only from src/m/.
 8. No .c file is longer than MAX_C_LINES lines.
 9, 10. Library and single homes: each row of the homes table of docs/STRUCTURE.md (between
    <!-- homes --> markers) names a text (an `#include <lib.h>`, or code matched with comments
    removed and strings kept) and the modules or files that alone may hold it.
11. The breaches of rules 4 and 6-10 that the code has today are listed, one line each, in the
    known list (--known; tests/structure_known.txt). A breach not listed fails; a listed line that
    is no longer found fails too, so the list can only shrink.

Options: --doc FILE (default: SRC_DIR/../docs/STRUCTURE.md), --known FILE (default: none),
--keys (print only the sorted breach lines, for the self-test), --verbose (details of known
breaches too). Prints every breach with what to do, and exits 1 when one is not excused.
"""
import collections
import os
import re
import sys
import textwrap

MAX_LINES = 150
MAX_C_LINES = 800
TRANSITIONAL = {4, 6, 7, 8, 9, 10}   # rules whose breaches the known list may excuse (rule 11)

# One pass over C text: comments, strings and character constants (in that order of priority at
# each position, so "//" in a string and '"' in a character constant are read right).
LEXEME = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
FORMAT_ATTR = re.compile(r"__attribute__\(\(format\(printf[^)]*\)\)\)")
IDENT = re.compile(r"[A-Za-z_]\w*")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
SYS_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*<([^>]+)>', re.M)
GENERATED = re.compile(r"\A\s*/\*[^\n]*\bgenerated\b[^\n]*\bdo not edit\b", re.I)
KEYWORDS = {"static", "extern", "inline", "const", "volatile", "restrict", "typedef", "struct",
            "union", "enum", "register", "signed", "unsigned", "void", "char", "short", "int",
            "long", "float", "double", "_Bool", "_Noreturn", "_Thread_local", "__thread",
            "sizeof", "return", "if", "for", "while", "switch", "_Static_assert", "__extension__"}


def blank(m, keep_strings):
    s = m.group(0)
    if s[0] == "/":
        return "\n" * s.count("\n") if s[1] == "*" else ""
    if keep_strings:
        return s
    return s[0] * 2


def strip_comments_and_strings(text):
    """Comments removed (their newlines kept), strings and character constants emptied."""
    return FORMAT_ATTR.sub("", LEXEME.sub(lambda m: blank(m, False), text))


def strip_comments(text):
    """Comments removed (their newlines kept), strings kept."""
    return LEXEME.sub(lambda m: blank(m, True), text)


def sources(top):
    for d, dirs, files in os.walk(top):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


class Source:
    """One file under SRC_DIR: its module (first folder), unit, raw and stripped texts."""

    def __init__(self, top, path):
        self.path = path
        self.rel = os.path.relpath(path, top).replace(os.sep, "/")
        parts = self.rel.split("/")
        self.module = parts[0] if len(parts) > 1 else ""
        self.name = parts[-1]
        self.stem = os.path.splitext(self.name)[0]
        self.is_c = self.name.endswith(".c")
        self.raw = read(path)
        self.code = strip_comments_and_strings(self.raw)
        self.code_strings = strip_comments(self.raw)
        self.generated = bool(GENERATED.match(self.raw))
        self.unit = None


# ---- reading the tables of docs/STRUCTURE.md --------------------------------------------------

def table_rows(doc_text, marker):
    m = re.search(r"<!--\s*%s\s*-->(.*?)<!--\s*/%s\s*-->" % (marker, marker), doc_text, re.S)
    if not m:
        return None
    rows = []
    for line in m.group(1).splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells if c):
            continue
        rows.append(cells)
    return rows[1:]   # the first row is the heading


def plain(cell):
    return re.sub(r"[`*]", "", cell).strip()


def names_of(cell):
    cell = plain(cell)
    if cell in ("", "-", "–", "—", "none"):
        return []
    return [n.strip() for n in cell.split(",") if n.strip()]


def read_modules(doc_text, doc_rel, folders, bad):
    """The modules table: {module: set of modules it may include}; table problems into bad."""
    rows = table_rows(doc_text, "modules")
    if rows is None:
        bad.append((0, f"{doc_rel}: no modules table (between <!-- modules --> and "
                       "<!-- /modules -->): the arrows cannot be checked", []))
        return None
    table = {}
    for cells in rows:
        if len(cells) < 3:
            bad.append((0, f"{doc_rel}: modules table row '| {' | '.join(cells)} |' has not 3 cells",
                        []))
            continue
        mod = plain(cells[0])
        if mod in table:
            bad.append((0, f"{doc_rel}: modules table has two rows for {mod}", []))
        table[mod] = names_of(cells[-1])
    for mod, deps in table.items():
        if deps == ["everything"]:
            table[mod] = [m for m in table if m != mod]
    for mod, deps in sorted(table.items()):
        for d in deps:
            if d not in table:
                bad.append((0, f"{doc_rel}: {mod} may include {d}, a module the table has no row "
                               "for", []))
            elif d == mod:
                bad.append((0, f"{doc_rel}: {mod} lists itself in its may-include cell", []))
    for f in sorted(folders - set(table)):
        bad.append((0, f"{doc_rel}: src/{f}/ has no row in the modules table (add one: its job and "
                       "the modules it may include)", []))
    # the table is acyclic: no component of two or more modules
    deps = {m: {d for d in ds if d in table and d != m} for m, ds in table.items()}
    for comp in strongly_connected(set(deps), deps):
        if len(comp) > 1:
            bad.append((0, f"{doc_rel}: the modules table has a circle among {', '.join(comp)}",
                        []))
    return {m: set(ds) for m, ds in table.items()}


def literal_pattern(text):
    """A regex for a literal code text: its blanks match any blanks, '(' may follow a space."""
    out = []
    for tok in re.findall(r"\s+|\w+|.", text):
        if tok.isspace():
            out.append(r"\s+")
        elif tok == "(" and out and re.match(r"\w", text[0]):
            out.append(r"\s*\(")
        else:
            out.append(re.escape(tok))
    pat = "".join(out)
    if re.match(r"\w", text):
        pat = r"(?<![\w])" + pat
    if re.search(r"\w$", text):
        pat += r"(?![\w])"
    return re.compile(pat)


def read_homes(doc_text, doc_rel, bad):
    """The homes table: [(what, kind, target, pattern, places)]."""
    rows = table_rows(doc_text, "homes")
    if rows is None:
        bad.append((0, f"{doc_rel}: no homes table (between <!-- homes --> and <!-- /homes -->)",
                    []))
        return []
    homes = []
    for cells in rows:
        m = re.search(r"`(.+)`", cells[1]) if len(cells) >= 3 else None
        if not m:
            bad.append((0, f"{doc_rel}: homes table row '| {' | '.join(cells)} |' needs "
                           "| what | `text` | only in |", []))
            continue
        text = m.group(1)
        lib = re.fullmatch(r"#\s*include\s*<([^>]+)>", text)
        homes.append((plain(cells[0]), "library" if lib else "code", lib.group(1) if lib else text,
                      None if lib else literal_pattern(text), names_of(cells[2])))
    return homes


def in_place(src, places):
    for p in places:
        p = p.rstrip("/")
        if src.rel == p or src.module == p or src.rel.startswith(p + "/"):
            return True
    return False


# ---- definitions: what each .c defines at file scope -------------------------------------------

ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\)")


def object_macros(srcs):
    """Object-like macros (#define NAME body), so that NS_INLINE reads as static inline."""
    macros = {}
    for s in srcs:
        for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\b(?!\()[ \t]*([^\n]*)$",
                             s.code, re.M):
            macros.setdefault(m.group(1), m.group(2))
    return macros


def expand(head, macros):
    for _ in range(4):
        new = IDENT.sub(lambda m: " %s " % macros[m.group(0)] if m.group(0) in macros
                        else m.group(0), head)
        if new == head:
            break
        head = new
    return ATTRIBUTE.sub(" ", head)


def no_preprocessor(code):
    """Preprocessor lines (with their continuations) blanked, newlines kept."""
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", code, flags=re.M)


def function_name(head):
    """The name a function-definition head declares, or None when head is not one."""
    depth, first = 0, None
    for m in re.finditer(r"[()]|=|[A-Za-z_]\w*", head):
        t = m.group(0)
        if t == "(":
            if depth == 0 and first is None:
                first = m.start()
            depth += 1
        elif t == ")":
            depth -= 1
        elif t == "=" and depth == 0:
            return None
    if first is None or not head.rstrip().endswith(")"):
        return None
    before = IDENT.findall(head[:first])
    if before and before[-1] not in KEYWORDS:
        return before[-1]
    inner = re.match(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\(", head[first:])   # returns a function pointer
    return inner.group(1) if inner else None


def object_names(decl):
    """The objects a file-scope declaration defines (not static, extern or typedef)."""
    words = IDENT.findall(decl)
    if not words or set(words) & {"static", "extern", "typedef", "_Static_assert"}:
        return []
    tag = re.match(r"\s*(?:(?:const|volatile)\s+)*(?:struct|union|enum)\b[^{=]*\{", decl)
    if tag:   # a struct, union or enum body: its declarators (if any) follow the body
        depth, i = 0, tag.end() - 1
        for i in range(tag.end() - 1, len(decl)):
            depth += {"{": 1, "}": -1}.get(decl[i], 0)
            if depth == 0:
                break
        decl = "T " + decl[i + 1:]
        if not IDENT.findall(decl[1:]):
            return []
    # bodies, initializer braces and array bounds out, then one name per declarator
    for _ in range(3):
        decl = re.sub(r"\{[^{}]*\}", " ", decl)
    decl = re.sub(r"\[[^\]]*\]", " ", decl)
    names = []
    for k, part in enumerate(re.split(r",(?![^(]*\))", decl)):
        part = part.split("=")[0]
        if "(" in part:   # a prototype; or a pointer to a function, (*name)(...)
            ptr = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)", part)
            if ptr:
                names.append(ptr.group(1))
            continue
        ws = IDENT.findall(part)
        if ws and ws[-1] not in KEYWORDS and (k > 0 or len(ws) >= 2):
            names.append(ws[-1])
    return names


def definitions(code, macros):
    """(name, kind, static) for every function and object defined at file scope of a .c."""
    text = no_preprocessor(code)
    out = []
    depth, head, construct = 0, [], None
    for m in re.finditer(r"[{};]|[^{};]+", text):
        t = m.group(0)
        if depth > 0:
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    if construct == "function":
                        head = []
                    else:
                        head.append("{}")
            continue
        if t == "{":
            h = expand("".join(head), macros)
            name = function_name(h)
            if name:
                static = "static" in IDENT.findall(h.split("(")[0])
                out.append((name, "function", static))
                construct = "function"
            else:
                construct = "aggregate"
            depth = 1
        elif t == ";":
            for name in object_names(expand("".join(head), macros)):
                out.append((name, "object", False))
            head = []
        elif t == "}":
            head = []   # unbalanced: resynchronise
        else:
            head.append(t)
    return out


def header_bodies(code):
    """What in a header can use another file's function: macro bodies and inline function bodies
    (declarations, which only name, are left out)."""
    parts = [m.group(1) for m in
             re.finditer(r"^[ \t]*#[ \t]*define[ \t]+\w+((?:[^\n]*\\\n)*[^\n]*)", code, re.M)]
    text = no_preprocessor(code)
    depth, head, start = 0, [], 0
    for m in re.finditer(r"[{};]|[^{};]+", text):
        t = m.group(0)
        if depth == 0:
            if t == "{":
                depth, start = 1, m.end()
                is_function = function_name("".join(head)) is not None
            elif t == ";":
                head = []
            elif t != "}":
                head.append(t)
        elif t in "{}" and len(t) == 1:
            depth += 1 if t == "{" else -1
            if depth == 0:
                if is_function:
                    parts.append(text[start:m.start()])
                head = []
    return "\n".join(parts)


# ---- rule 4: circles inside a module ---------------------------------------------------------

def strongly_connected(nodes, succ):
    """Tarjan's algorithm without recursion: the components, each a sorted list."""
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def one_cycle(comp, succ):
    """The shortest cycle through comp's smallest unit, inside comp (breadth first)."""
    start, inside = comp[0], set(comp)
    prev, queue = {}, [start]
    for v in queue:
        for w in sorted(succ.get(v, ())):
            if w not in inside:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [start] + path[::-1][1:] + [start] if v != start else [start, start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def circles(srcs, defs):
    """Rule 4: one breach per circle (component of two or more units) of each module."""
    bad = []
    by_module = collections.defaultdict(list)
    for s in srcs:
        by_module[s.module].append(s)
    for mod, files in sorted(by_module.items()):
        units = {}
        for s in files:
            base = s.stem[:-len("_internal")] if s.stem.endswith("_internal") else s.stem
            s.unit = base
            units.setdefault(base, []).append(s)
        edges = collections.defaultdict(lambda: collections.defaultdict(list))
        for s in files:
            for inc in INCLUDE.findall(s.code_strings):
                parts = inc.split("/")
                if len(parts) != 2 or parts[0] != mod or not parts[1].endswith(".h"):
                    continue
                stem = parts[1][:-2]
                target = stem[:-len("_internal")] if stem.endswith("_internal") else stem
                if target != s.unit:
                    edges[s.unit][target].append(f"{s.name} includes {parts[1]}")
        local = {}
        for s in files:
            if s.is_c:
                for name, kind, static in defs[s.rel]:
                    if not static:
                        local.setdefault(name, []).append((s.unit, kind))
        for s in files:
            own = {name for name, _, _ in defs.get(s.rel, ())}
            used = IDENT.findall(s.code if s.is_c else header_bodies(s.code))
            for name in sorted(set(used) - own):
                for target, kind in local.get(name, ()):
                    if target != s.unit:
                        verb = "calls" if kind == "function" else "uses"
                        edges[s.unit][target].append(f"{s.name} {verb} {name}")
        succ = {u: set(vs) for u, vs in edges.items()}
        for comp in strongly_connected(set(units) | set(succ), succ):
            if len(comp) < 2:
                continue
            cyc = one_cycle(comp, succ)
            detail = ["one cycle: " + " -> ".join(cyc), "every edge inside it:"]
            for a in comp:
                for b in sorted(succ.get(a, ())):
                    if b in comp:
                        detail.append(f"  {a} -> {b}: " + "; ".join(sorted(set(edges[a][b]))))
            bad.append((4, f"src/{mod}: circle among {', '.join(comp)}", detail))
    return bad


# ---- the other rules -----------------------------------------------------------------------

def process_and_print(srcs):
    bad = []
    for s in srcs:
        if s.module == "cli":
            continue
        for n, line in enumerate(s.code.split("\n"), 1):
            if re.search(r"\b(MPI_Init(_thread)?|sigaction|signal|exit|_Exit|abort)\s*\(", line):
                bad.append((1, f"src/{s.rel}:{n}: process control outside src/cli: {line.strip()}",
                            []))
            if re.search(r"\b(stdout|stderr|printf|vprintf|puts|perror)\b", line):
                bad.append((2, f"src/{s.rel}:{n}: prints outside src/cli: {line.strip()}", []))
    return bad


def long_functions(srcs):
    bad = []
    for s in srcs:
        if not s.is_c:
            continue
        start = None
        for n, line in enumerate(s.code.split("\n"), 1):
            if line.startswith("{"):
                start = n
            elif line.startswith("}") and start is not None:
                if n - start + 1 > MAX_LINES:
                    bad.append((3, f"src/{s.rel}:{start}: a function of {n - start + 1} lines "
                                   f"(at most {MAX_LINES})", []))
                start = None
    return bad


def unused_public(srcs, generated_texts):
    bad = []
    count = collections.Counter()
    for s in srcs:
        count.update(IDENT.findall(s.code))
    for t in generated_texts:
        count.update(IDENT.findall(t))
    for s in srcs:
        if s.is_c or s.stem.endswith("_internal"):
            continue
        for name in re.findall(r"^[A-Za-z_][\w \*]*?\b(ns_\w+)\s*\(", s.code, flags=re.M):
            if count[name] < 3:  # declaration, definition, and at least one use
                bad.append((5, f"src/{s.rel}: public {name}() is never used by the program", []))
    return bad


def arrows(srcs, folders, table, homes):
    bad = []
    for s in srcs:
        text = s.code_strings
        seen = set()
        for inc in INCLUDE.findall(text):
            parts = inc.split("/")
            if len(parts) != 2 or inc in seen:
                continue
            seen.add(inc)
            m, h = parts
            if m == s.module:
                continue
            if table is not None and s.module in table and (m in table or m in folders):
                if m not in table[s.module]:
                    bad.append((6, f"src/{s.rel} includes {inc}: {s.module} may not include {m}",
                                [f"{s.module} may include: "
                                 f"{', '.join(sorted(table[s.module])) or 'no module'}"]))
            if h.endswith("_internal.h"):
                bad.append((7, f"src/{s.rel} includes {inc}, a private header of {m}", []))
        for what, kind, target, pattern, places in homes:
            if in_place(s, places):
                continue
            if kind == "library":
                hit = [text.count("\n", 0, mm.start()) + 1 for mm in SYS_INCLUDE.finditer(text)
                       if mm.group(1).strip() == target]
            else:
                hit = [text.count("\n", 0, mm.start()) + 1 for mm in pattern.finditer(text)]
            if hit:
                rule = 9 if kind == "library" else 10
                shown = f"#include <{target}>" if kind == "library" else target
                bad.append((rule, f"src/{s.rel}: {what}, `{shown}`, outside its home "
                                  f"{', '.join(places)}",
                            ["at line " + ", ".join(map(str, hit))]))
        if s.is_c:
            n = len(s.raw.splitlines())
            if n > MAX_C_LINES:
                bad.append((8, f"src/{s.rel}: more than {MAX_C_LINES} lines", [f"{n} lines"]))
    return bad


# ---- what to do, per rule ------------------------------------------------------------------

def hint(rule, key, known_path):
    if rule == 4:
        return ("to fix: make every edge above point one way. Move what both sides need (the "
                "helpers one side calls back, the declarations of a sibling's functions) into a "
                "unit of its own that includes and calls none of them: a leaf x.c with its own "
                "x.h, or a header-only x_internal.h (docs/STRUCTURE.md, rule 4). A new circle is "
                f"never added to {known_path}.")
    if rule == 6:
        m = re.search(r"includes ([^/]+)/\S+: (\S+) may not include", key)
        return (f"to fix: move the code this file needs into a module {m.group(2)} may include, or "
                f"this file's code into a module that may include {m.group(1)} (the modules table "
                "of docs/STRUCTURE.md). Only if the header is one issue 32 is still to move out of "
                "a folder it splits (today sweep/ holds the results store of the future reduce/), "
                f"add this exact line to {known_path} in the same commit and name it in the commit "
                "message: the step that moves the header deletes it.")
    if rule == 7:
        return ("to fix: include the module's public header; if what you need is not in one, "
                "give it a public header (x.h) in its own module (docs/STRUCTURE.md, rule 7).")
    if rule == 8:
        return ("to fix: split the file by job; the larger half keeps the name (so git follows "
                "it), the other half gets its own .c and header (docs/STRUCTURE.md, rule 8).")
    if rule == 9:
        return ("to fix: go through the module that owns this library (its home, named above) "
                "instead of including it here (docs/STRUCTURE.md, rule 9).")
    if rule == 10:
        return ("to fix: call the one definition in its home (named above) instead of writing "
                "the text again (docs/STRUCTURE.md, rule 10).")
    return None


def circle_members(key):
    m = re.fullmatch(r"src/(\S+): circle among (.*)", key)
    return (m.group(1), set(m.group(2).split(", "))) if m else None


def read_known(text, path, bad):
    known, seen = [], set()
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line in seen:
            bad.append((0, f"{path}:{n}: listed twice: {line}", []))
        seen.add(line)
        known.append(line)
    return known


def shown_path(path, top):
    """path as seen from the tree SRC_DIR is in (docs/STRUCTURE.md), else as given."""
    rel = os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(top)))
    return path if rel.startswith("..") else rel


def main(argv):
    doc = known_path = None
    keys_only = verbose = False
    args = []
    it = iter(argv)
    for a in it:
        if a in ("--doc", "--known"):
            value = next(it, None)
            if value is None:
                print(f"check_structure: {a} needs a file", file=sys.stderr)
                return 2
            if a == "--doc":
                doc = value
            else:
                known_path = value
        elif a == "--keys":
            keys_only = True
        elif a in ("-v", "--verbose"):
            verbose = True
        elif a.startswith("-"):
            print(f"check_structure: unknown option {a}", file=sys.stderr)
            return 2
        else:
            args.append(a)
    top = args[0] if args else "src"
    doc = doc or os.path.join(top, "..", "docs", "STRUCTURE.md")
    doc_rel = shown_path(doc, top)
    bad = []

    everything = [Source(top, p) for p in sources(top)]
    srcs = [s for s in everything if not s.generated]
    generated = [s.code for s in everything if s.generated]
    for extra in args[1:]:
        if os.path.realpath(extra) != os.path.realpath(top):
            generated += [strip_comments_and_strings(read(p)) for p in sources(extra)]
    folders = {s.module for s in srcs if s.module}   # the modules: folders holding C files

    try:
        doc_text = read(doc)
        known_text = read(known_path) if known_path else ""
    except OSError as e:
        print(f"check_structure: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    table = read_modules(doc_text, doc_rel, folders, bad)
    homes = read_homes(doc_text, doc_rel, bad)

    macros = object_macros(srcs)
    defs = {s.rel: definitions(s.code, macros) for s in srcs if s.is_c}
    bad += process_and_print(srcs)
    bad += long_functions(srcs)
    bad += circles([s for s in srcs if s.module], defs)
    bad += unused_public(srcs, generated)
    bad += arrows(srcs, folders, table, homes)

    known = read_known(known_text, known_path, bad)
    known_rel = shown_path(known_path, top) if known_path else "tests/structure_known.txt"
    found = {key for rule, key, _ in bad if rule in TRANSITIONAL}
    excused = {key for key in known if key in found}
    stale = [key for key in known if key not in found]
    new = [(r, k, d) for r, k, d in bad if not (r in TRANSITIONAL and k in excused)]

    if keys_only:
        for line in sorted({k for _, k, _ in new}):
            print(line)
        for line in stale:
            print("fixed: " + line)
        return 1 if new or stale else 0

    units = {(s.module, s.unit) for s in srcs if s.unit}
    if verbose:
        for r, k, d in sorted(bad, key=lambda b: (b[0], b[1])):
            if r in TRANSITIONAL and k in excused:
                print(f"known (rule {r}): {k}")
                for line in d:
                    print("    " + line)
    for r, k, d in new:
        print(k)
        for line in d:
            print("    " + line)
        h = hint(r, k, known_rel)
        if h:
            print(textwrap.fill(h, 100, initial_indent="    ", subsequent_indent="    "))
    for line in stale:
        old = circle_members(line)
        now = [k for r, k, _ in new if r == 4 and old and circle_members(k)[0] == old[0]
               and circle_members(k)[1] & old[1]]
        rules = [r for r, k, _ in bad if k == line]
        if rules:
            say = (f"not excused: '{line}' is a breach of rule {rules[0]}, which the list cannot "
                   f"excuse: fix it and delete the line from {known_rel}")
        elif not now:
            say = (f"fixed: '{line}' no longer occurs: delete the line from {known_rel} (the list "
                   "only shrinks; docs/STRUCTURE.md, rule 11)")
        else:
            cur = circle_members(now[0])[1]
            joined, left = sorted(cur - old[1]), sorted(old[1] - cur)
            say = f"changed: the known '{line}' now reads '{now[0]}'"
            if not joined:
                say += f": it shrank ({', '.join(left)} left it); replace the line by the new one"
            else:
                say += (f": {', '.join(joined)} joined it"
                        + (f" ({', '.join(left)} left it)" if left else "")
                        + "; remove the edges between " + ", ".join(joined) + " and the circle "
                        "that point back into it (listed above): a known circle may shrink, "
                        "never grow")
        print(say)
    print(f"check_structure: {len(srcs)} files, {len(units)} units; {len(new)} new problem(s), "
          f"{len(excused)} known ({known_rel}), {len(stale)} known line(s) no longer found")
    return 1 if new or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
