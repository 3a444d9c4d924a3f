"""load: one sweep's NetCDF file (METRICS version 2) as the report reads it: the reduced
statistics (fill values turned into NaN), the global attributes, the per-row samples on demand
(`keep_samples: true`), and the bootstrap intervals when the file carries them (docs/STATISTICS.md,
"The intervals in the NetCDF file").

Two output layouts are read (docs/OUTPUT.md, `output_layout`): 2 (the normalizer's name as its
coordinate, `<stem>_quantile` over a `quantile` dimension, N-free Jacobian counts, n_crit missing
where no N is found with `n_crit_*_status`), and 1 (files written before it, without the
attribute). The report's code reads layout 1's names: a layout 2 file is mapped onto them here
(`<stem>_min`, `_q05`, `_q50`, `_q95`, `_max` from the quantiles; a length-1 N axis on the
Jacobian counts; n_crit 0 where none of the grid's N passes). A newer layout is refused."""
import math
import os

import numpy as np
import netCDF4


class InputError(Exception):
    """A problem with the user's file: one line on stderr, exit status 2."""


LAYOUT = 2  # the newest output_layout this report reads

# layout 2's names for the ones layout 1 requires (REQUIRED)
REQUIRED_2 = ["normalizer", "quantile", "L", "N", "T", "eps", "layer", "head", "n_samples",
              "jac_bound", "distance_quantile", "distance_random_quantile",
              "distance_expected_quantile", "distance_bound_quantile", "ns_frac_mean",
              "ns_lower_mean", "ns_upper_mean", "jac_exact_quantile", "jac_fd_quantile",
              "entropy_norm_mean", "n_crit_expected", "n_crit_expected_status", "n_crit_random",
              "n_crit_random_status", "ks_expected_pvalue", "thm1_violations", "thm1_checked",
              "jac_exact_violations", "jac_exact_checked", "jac_fd_violations", "jac_fd_checked",
              "ns_upper_violations", "ns_upper_checked", "ns_lower_violations", "ns_lower_checked",
              "ns_lower_vacuous", "ns_upper_vacuous", "lemma2_violations", "lemma2_checked",
              "skipped_rows"]
# layout 1's statistics kept in layout 2's `<stem>_quantile`, by quantile
QUANTILE_STATS = (("min", 0.0), ("q05", 0.05), ("q50", 0.5), ("q95", 0.95), ("max", 1.0))
# layout 2's counts without N (the Jacobian does not depend on it): N is inserted after T
N_FREE_COUNTS = ("jac_exact_violations", "jac_exact_checked", "lemma2_violations",
                 "lemma2_checked", "jac_fd_violations", "jac_fd_checked")

REQUIRED = ["normalizer", "L", "N", "T", "eps", "layer", "head", "n_samples", "jac_bound",
            "distance_q50", "distance_random_q50", "distance_expected_q50", "distance_bound_q50",
            "ns_frac_mean", "ns_lower_mean", "ns_upper_mean", "jac_exact_max", "jac_fd_max",
            "entropy_norm_mean", "n_crit_expected", "n_crit_random", "ks_expected_pvalue",
            "thm1_violations", "thm1_checked", "jac_exact_violations", "jac_exact_checked",
            "jac_fd_violations", "jac_fd_checked", "ns_upper_violations", "ns_upper_checked",
            "ns_lower_violations", "ns_lower_checked", "ns_lower_vacuous", "ns_upper_vacuous",
            "lemma2_violations", "lemma2_checked", "skipped_rows"]

# The per-row variables the bootstrap reads (docs/STATISTICS.md, "What gets an interval").
SAMPLE_STEMS = ("distance", "distance_expected", "distance_random", "distance_bound", "ns_frac",
                "ns_upper", "ns_lower", "jac_exact", "entropy_norm")


class Run:
    """The NetCDF file's reduced variables and global attributes; samples read on demand."""

    def __init__(self, path):
        if not os.path.exists(path):
            raise InputError("%s: no such file" % path)
        try:
            ds = netCDF4.Dataset(path, "r")
        except OSError as exc:
            raise InputError("%s: not a readable NetCDF file (%s)" % (path, exc))
        try:
            self.layout = _layout(ds, path)
            missing = [v for v in (REQUIRED_2 if self.layout == 2 else REQUIRED)
                       if v not in ds.variables]
            if missing:
                raise InputError("%s: not a normsweep sweep output (METRICS version 2, output "
                                 "layout %d): missing variable(s) %s"
                                 % (path, self.layout, ", ".join(missing)))
            ds.set_auto_mask(False)
            self.var = {}
            self.sample_vars = set()
            for name, v in ds.variables.items():
                if name.endswith("_sample"):
                    self.sample_vars.add(name)  # large: read on demand
                    continue
                self.var[name] = _read(v)
            self.attrs = {a: ds.getncattr(a) for a in ds.ncattrs()}
            self.long_names = {n[:-5]: str(getattr(v, "long_name", ""))[len("mean over rows of "):]
                               for n, v in ds.variables.items() if n.endswith("_mean")}
        finally:
            ds.close()
        if self.layout == 2:
            _as_layout_1(self.var)
        self.path = path
        self._samples = {}
        for d in ("L", "N", "T", "layer", "head"):
            if self.var[d].size == 0:
                raise InputError("%s: dimension %s is empty: the sweep is incomplete" % (path, d))
        self.L = self.var["L"].astype(int)
        self.N = self.var["N"].astype(int)
        self.T = self.var["T"].astype(float)
        self.eps = self.var["eps"].astype(float)
        self.layers = self.var["layer"].astype(int)
        self.heads = self.var["head"].astype(int)
        names = self.var.get("normalizer_name")
        self.norm_names = [str(x) for x in names] if names is not None else \
            ["normalizer %d" % i for i in range(self.var["normalizer"].size)]
        self.ks_alpha = float(self.attrs.get("ks_alpha", 0.01))
        self.seed = int(self.attrs.get("seed", 0))
        self.n_shards = int(self.var["shard"].size) if "shard" in self.var else \
            int(self.attrs.get("shard_count", 0))
        self.rows = int(self.attrs.get("rows", 1))

    def __getitem__(self, name):
        return self.var[name]

    def attr(self, name, default="unknown"):
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v

    # ---- samples ----
    def has_samples(self):
        """True when the file holds every per-row variable the bootstrap needs, with the shard
        of each sample (keep_samples: true)."""
        return ("sample_shard" in self.var and self.var["sample_shard"].size > 0 and
                all(s + "_sample" in self.sample_vars for s in SAMPLE_STEMS))

    def sample_shard(self):
        return self.var["sample_shard"].astype(int)

    def sample(self, stem, ni, li):
        """The per-row values of one (normalizer, L): dims as the stem's statistics without
        normalizer and L, plus sample; missing rows are NaN. A variable is read whole once (the
        sweep writes it as one chunk, so a slice would decompress it whole anyway)."""
        if stem not in self._samples:
            with netCDF4.Dataset(self.path, "r") as ds:
                ds.set_auto_mask(False)
                self._samples[stem] = np.array(ds.variables[stem + "_sample"][:], dtype=float)
        return self._samples[stem][ni, li]

    def drop_samples(self):
        self._samples = {}

    # ---- the model ----
    def model_name(self):
        """The model's name as a reader knows it: model_used, or the directory's name when the
        file records only that a directory was given."""
        used = str(self.attr("model_used"))
        if used in ("path", "unknown", ""):
            p = str(self.attr("model_path", "")) or str(self.attr("model_requested", ""))
            return os.path.basename(os.path.normpath(p)) or used
        return used

    def is_standin(self):
        return any("standin" in str(self.attr(a, "")) for a in
                   ("model_used", "model_path", "model_requested"))

    def caveat(self):
        used, req = self.model_name(), str(self.attr("model_requested"))
        if str(self.attr("model_fallback", "false")) == "true":
            return ("the sweep asked for %s but ran on %s: these numbers describe %s, not %s, and "
                    "are not comparable with the paper's GPT-2 figures" % (req, used, used, req))
        if self.is_standin():
            return ("%s is a small stand-in model (not GPT-2): these numbers are not comparable "
                    "with the paper's GPT-2 figures" % used)
        return ""


def _layout(ds, path):
    """The file's output_layout: 1 without the attribute (files before issue 34)."""
    raw = getattr(ds, "output_layout", 1)
    try:
        layout = int(np.asarray(raw).ravel()[0])
    except (TypeError, ValueError, IndexError):
        raise InputError("%s: output_layout = %r is not a layout number" % (path, raw))
    if layout not in (1, LAYOUT):
        raise InputError("%s: written in output layout %d; this report reads layouts 1 and %d "
                         "(a newer normsweep's report reads it)" % (path, layout, LAYOUT))
    return layout


def _as_layout_1(var):
    """Map layout 2's variables (read by _read) onto layout 1's names, in place."""
    q = np.asarray(var["quantile"], dtype=float)
    for name in [n for n in var if n.endswith("_quantile")]:
        stem, x = name[:-len("_quantile")], var.pop(name)
        for stat, p in QUANTILE_STATS:
            hit = np.flatnonzero(q == p)
            if hit.size:
                var["%s_%s" % (stem, stat)] = x[hit[0]]
    for name in N_FREE_COUNTS:
        var[name] = np.expand_dims(var[name], 3)
    for test in ("expected", "random"):
        status = var.pop("n_crit_%s_status" % test)
        nc = var["n_crit_" + test]
        var["n_crit_" + test] = np.where(status == 0, nc, np.where(status == 1, 0.0, np.nan))
    var["normalizer_name"] = var["normalizer"]
    var["normalizer"] = np.arange(var["normalizer"].size)


def _read(v):
    a = np.array(v[:])
    fill = getattr(v, "_FillValue", None)
    if a.dtype.kind in "iu" and fill is not None:
        a = np.where(a == fill, np.nan, a.astype(float))
    elif a.dtype.kind == "S":
        a = netCDF4.chartostring(a)
    return a


def nearest(values, target, log=False):
    v = np.asarray(values, dtype=float)
    return int(np.argmin(np.abs(np.log(v) - math.log(target)) if log else np.abs(v - target)))
