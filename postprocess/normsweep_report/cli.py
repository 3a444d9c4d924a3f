"""cli: the command line of the report (postprocess/report, installed as normsweep-report):
options, exit status, the lines it prints."""
import argparse
import os
import signal
import sys
import warnings

from . import bootstrap, files
from .load import InputError, Run

USAGE_EPILOG = """exit status: 0 done; 2 unusable input (no such file, not a METRICS-version-2
sweep output, an empty dimension, a bad option), one line on stderr; 1 when OUT cannot be
written; 3 stopped by SIGTERM or SIGINT. Every file goes to a temporary renamed into place when
complete: a failed or stopped report leaves the previous files whole. docs/REPORT.md describes
the page, docs/STATISTICS.md the intervals and verdicts."""


class Stopped(BaseException):
    """SIGTERM or SIGINT: a BaseException, so no `except Exception` of the report swallows it."""
    pass


def _stop(signum, frame):
    raise Stopped(signal.Signals(signum).name)


REPORT_FILES = ("report.html", "report.json", "training.html", "training.json")


def written_here(name):
    """Whether the report writes a file of this name into its --out directory."""
    return name in REPORT_FILES or (name.startswith("fig") and
                                    os.path.splitext(name)[1] in (".png", ".pdf", ".svg"))


def output_path_problem(out_dir, written, inputs):
    """What is wrong when a file the command writes into out_dir (a name for which written(name)
    is true) would replace one of inputs ((what, path) pairs: the files it reads), or None.
    Paths are compared after resolving links, '.' and '..', and by device and inode (hard links,
    bind mounts), as normsweep's own commands do (src/common/ns_outpath)."""
    out_real = os.path.realpath(out_dir)
    for what, path in inputs:
        if not path:
            continue
        parent, name = os.path.split(os.path.realpath(path))
        same_dir = parent == out_real or (os.path.isdir(parent) and os.path.isdir(out_real) and
                                          os.path.samefile(parent, out_real))
        if same_dir and written(name):
            return ("--out %s: writing %s there would replace %s %s; choose another --out"
                    % (out_dir, name, what, path))
        if os.path.exists(path) and os.path.isdir(out_real):
            for other in os.listdir(out_real):
                if written(other) and os.path.samefile(os.path.join(out_real, other), path):
                    return ("--out %s: writing %s there would replace %s %s (the same file); "
                            "choose another --out" % (out_dir, other, what, path))
    return None


def main(argv):
    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells are expected (skipped)
    ap = argparse.ArgumentParser(
        prog="normsweep-report", epilog=USAGE_EPILOG,
        description="the paper's figures, the verdict of each of its claims (supported, "
        "contradicted, inconclusive, with 95 % shard-bootstrap intervals) and a self-contained "
        "HTML report from one normsweep NetCDF file; and the training page of a train-grid")
    ap.add_argument("run", nargs="?", help="the sweep's NetCDF output")
    ap.add_argument("--out", required=True, help="directory for the figures and the report")
    ap.add_argument("--training", metavar="GRID_DIR",
                    help="a normsweep train-grid output directory: writes training.html")
    ap.add_argument("--compare", nargs="+", metavar="RUN",
                    help="several models side by side: two or more sweep outputs, or a "
                    "campaign's output directory (normsweep run CAMPAIGN.yaml): one colour per "
                    "model, a verdict column per model (docs/REPORT.md)")
    ap.add_argument("--format", default="png,pdf",
                    help="figure formats, comma-separated: png, pdf, svg (default png,pdf; png "
                    "is always written, the page embeds it)")
    ap.add_argument("--resamples", type=int, default=bootstrap.DEFAULT_RESAMPLES,
                    help="bootstrap resamples when the file has per-row samples (default %d, "
                    "at least %d)" % (bootstrap.DEFAULT_RESAMPLES, bootstrap.MIN_RESAMPLES))
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    if args.compare and (args.run or args.training):
        ap.error("--compare takes the sweeps to compare itself (no RUN, no --training)")
    if not args.run and not args.training and not args.compare:
        ap.error("give a sweep's NetCDF file, --training GRID_DIR, or both; or --compare")
    formats = [f for f in args.format.split(",") if f]
    if "png" not in formats:
        formats.insert(0, "png")
    bad = [f for f in formats if f not in ("png", "pdf", "svg")]
    rep = trep = crep = None
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    progress = None if args.quiet else (lambda m: sys.stderr.write("report: bootstrap: %s\n" % m))
    try:
        if bad:
            raise InputError("--format: unknown format(s) %s (png, pdf, svg)" % ", ".join(bad))
        problem = output_path_problem(args.out, written_here, [("the sweep output", args.run)] +
                                      [("a compared sweep", p) for p in args.compare or []])
        if problem:
            raise InputError(problem)
        if args.resamples < bootstrap.MIN_RESAMPLES:
            raise InputError("--resamples %d: at least %d (docs/STATISTICS.md: the Monte Carlo "
                             "error of the interval's endpoints)" % (args.resamples,
                                                                     bootstrap.MIN_RESAMPLES))
        run = Run(args.run) if args.run else None
        from . import training
        cells = training.read_grid(args.training) if args.training else None
        os.makedirs(args.out, exist_ok=True)
        for path in files.clean_stale(args.out, written_here):
            sys.stderr.write("report: removed %s, left by a report that was killed\n" % path)
        if run:
            from . import build
            rep = build.build(run, args.out, formats, args.resamples, bool(cells), progress)
        if cells:
            trep = training.build(args.training, args.out, formats)
        if args.compare:
            from . import compare
            crep = compare.build(args.compare, args.out, formats, args.resamples, progress)
    except InputError as exc:
        sys.stderr.write("report: %s\n" % exc)
        return 2
    except OSError as exc:
        sys.stderr.write("report: %s\n" % ("%s: %s" % (exc.filename, exc.strerror)
                                            if exc.filename and exc.strerror else exc))
        return 1
    except Stopped as exc:
        sys.stderr.write("report: stopped by %s; the files written so far are whole, the rest "
                         "are as they were\n" % exc)
        return 3
    if rep:
        for w in rep["warnings"]:
            print("report: warning: %s" % w)
        for c in rep["claims"]:
            print("report: %s (%s): %s -- %s%s" % (
                c["claim"], c["figure"], c["verdict"], c["reason"],
                "; fragile" if c["fragile"] else ""))
        if rep["model"]["caveat"]:
            print("report: caveat: %s" % rep["model"]["caveat"])
        print("report: intervals: %s" % rep["uncertainty"]["description"])
        print("report: wrote %s" % os.path.join(args.out, "report.html"))
    if crep:
        for c in crep["claims"]:
            print("report: %s (%s): %s" % (c["claim"], c["figure"], "; ".join(
                "%s %s" % (k, v) for k, v in c["verdicts"].items())))
        print("report: wrote %s" % os.path.join(args.out, "report.html"))
    if trep:
        for n, a in trep["unstable_at_low_T"].items():
            print("report: training at T <= %g unstable with %s? %s" % (0.1, n, a))
        print("report: wrote %s" % os.path.join(args.out, "training.html"))
    return 0
