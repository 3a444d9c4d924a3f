#!/usr/bin/python3
"""check_report_files: the report writes every file through a temporary renamed into place
(postprocess/normsweep_report/files.py, docs/REPORT.md):
  (1) a report leaves no temporary;
  (2) a killed report's temporaries (NAME.tmp.PID of a file the report writes, PID gone) are
      removed and named by the next report; another process's (PID alive) and files the report
      does not write are left alone;
  (3) SIGTERM arriving while a file is being written (raised from inside the write, at the 3rd
      file: no race): exit 3, every file written before it new and whole, that file and every
      later one exactly as before, no temporary.

    check_report_files.py POSTPROCESS_DIR WORK_DIR"""
import contextlib
import os
import signal
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_fixture  # noqa: E402
from normsweep_report import cli, files  # noqa: E402

work = sys.argv[2]
problems = []


def check(what, ok):
    if not ok:
        problems.append(what)


def report(argv):
    """cli.main(argv) with its stdout (the verdict lines) dropped."""
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        return cli.main(argv)


def temporaries(out):
    return sorted(e for e in os.listdir(out) if ".tmp." in e)


def snapshot(out):
    snap = {}
    for e in os.listdir(out):
        with open(os.path.join(out, e), "rb") as f:
            snap[e] = f.read()
    return snap


nc = report_fixture.write(os.path.join(work, "files.nc"))
out = os.path.join(work, "out")
args = [nc, "--out", out, "--resamples", "1000", "--quiet", "--format", "png"]

# (1)
check("(1) first report: exit 0", report(args) == 0)
check("(1) no temporary left: %s" % temporaries(out), temporaries(out) == [])
made = sorted(os.listdir(out))
check("(1) report.html and report.json written", "report.html" in made and "report.json" in made)

# (2) a dead PID: a child that has exited and been reaped
child = subprocess.Popen(["true"])
child.wait()
dead = child.pid
live = subprocess.Popen(["sleep", "600"])
try:
    planted = {"report.html.tmp.%d" % dead: True, "fig2a_distance_vs_N.png.tmp.%d" % dead: True,
               "report.json.tmp.%d" % live.pid: False, "notes.txt.tmp.%d" % dead: False}
    for name in planted:
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"partial")
    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    try:
        rc = report(args)
    finally:
        os.dup2(saved, 2)
        os.close(w)
    err = os.read(r, 1 << 20).decode()
    check("(2) report with stale temporaries: exit 0", rc == 0)
    for name, removed in planted.items():
        there = os.path.exists(os.path.join(out, name))
        check("(2) %s %s" % (name, "should be removed" if removed else "should be kept"),
              there != removed)
        check("(2) %s named on stderr iff removed" % name,
              (("removed %s" % os.path.join(out, name)) in err) == removed)
finally:
    live.kill()
    live.wait()
for name in ("report.json.tmp.%d" % live.pid, "notes.txt.tmp.%d" % dead):
    os.unlink(os.path.join(out, name))

# (3) SIGTERM from inside the third file's write (the real handler runs: signal.raise_signal)
for name in os.listdir(out):
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"old " + name.encode())
before = snapshot(out)
order = []
real_replace = files.replace


def replace_then_term(path, write):
    order.append(os.path.basename(path))

    def wrapped(f):
        write(f)
        if len(order) == 3:
            signal.raise_signal(signal.SIGTERM)
    real_replace(path, wrapped)


files.replace = replace_then_term
try:
    rc = report(args)
finally:
    files.replace = real_replace
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
after = snapshot(out)
check("(3) SIGTERM during a write: exit 3 (got %r)" % rc, rc == 3)
check("(3) writes stopped at the third file: %s" % order, len(order) == 3)
check("(3) no temporary left: %s" % temporaries(out), temporaries(out) == [])
for k, name in enumerate(order):
    if k < 2:
        check("(3) %s written before the signal is new" % name,
              after.get(name) not in (None, before.get(name)) and not after[name].startswith(b"old "))
    else:
        check("(3) %s, being written at the signal, is as before" % name,
              after.get(name) == before.get(name))
later = [n for n in before if n not in order]
check("(3) the files after it are as before", all(after.get(n) == before[n] for n in later))

for p in problems:
    print("check_report_files:", p)
print("check_report_files: %d problem(s)" % len(problems))
sys.exit(1 if problems else 0)
