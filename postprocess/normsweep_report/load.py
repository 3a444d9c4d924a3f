"""load: one sweep's NetCDF file (METRICS version 2) as the report reads it: the reduced
statistics (fill values turned into NaN), the global attributes, the per-row samples on demand
(`keep_samples: true`), and the bootstrap intervals when the file carries them (docs/STATISTICS.md,
"The intervals in the NetCDF file")."""
import math
import os

import numpy as np
import netCDF4


class InputError(Exception):
    """A problem with the user's file: one line on stderr, exit status 2."""


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
            missing = [v for v in REQUIRED if v not in ds.variables]
            if missing:
                raise InputError("%s: not a normsweep sweep output (METRICS version 2): missing "
                                 "variable(s) %s" % (path, ", ".join(missing)))
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
