#!/usr/bin/python3
"""report_fixture: a small hand-made sweep file (METRICS version 2 layout, keep_samples: true)
for the report's tests: per-row samples drawn from a fixed numpy generator, and every reduced
variable the report reads computed from them here (means, maxima, KS statistics and n_crit with
scipy), so the file is self-consistent. write(path, **grid) -> path."""
import numpy as np
import netCDF4
from scipy.stats import ks_2samp

STEMS_N = ("distance", "distance_expected", "distance_random", "distance_bound", "ns_frac",
           "ns_upper", "ns_lower")


def write(path, L=(8, 16), N=(1, 2, 4), T=(1.0, 2.0), shards=5, rows=2, layers=2, heads=2,
          seed=7, ks_alpha=0.01, file_seed=0, model="/somewhere/gpt2-standin",
          with_samples=True):
    rng = np.random.default_rng(seed)
    L, N, T = list(L), list(N), list(T)
    nL, nN, nT, H = len(L), len(N), len(T), layers * heads
    S = shards * rows
    sh = np.repeat(np.arange(shards), rows)
    ds = netCDF4.Dataset(path, "w")
    for d, n in (("normalizer", 1), ("L", nL), ("N", nN), ("T", nT), ("eps", 1),
                 ("layer", layers), ("head", heads), ("shard", shards), ("sample", S),
                 ("name_strlen", 16)):
        ds.createDimension(d, n)

    def var(name, dims, data, dtype="f8", fill=None):
        v = ds.createVariable(name, dtype, dims, fill_value=fill)
        v[:] = data
        return v
    var("normalizer", ("normalizer",), [0], "i4")
    nm = ds.createVariable("normalizer_name", "S1", ("normalizer", "name_strlen"))
    nm[:] = netCDF4.stringtochar(np.array(["softmax"], "S16"))
    var("L", ("L",), L, "i4")
    var("N", ("N",), N, "i4")
    var("T", ("T",), T)
    var("eps", ("eps",), [1e-3])
    var("layer", ("layer",), range(layers), "i4")
    var("head", ("head",), range(heads), "i4")
    var("shard", ("shard",), range(shards), "i4")
    var("sample", ("sample",), range(S), "i4")
    var("sample_shard", ("sample",), sh, "i4")
    var("sample_row", ("sample",), np.tile(np.arange(rows), shards), "i4")
    var("n_samples", ("L",), [S] * nL, "i4")
    var("jac_bound", ("T",), [min(1 / (4 * t), 2 ** 0.5) for t in T])
    cell = ("normalizer", "L", "T", "N", "layer", "head")
    rowd = ("normalizer", "L", "T", "layer", "head")
    shp = (1, nL, nT, nN, layers, heads, S)
    # per-row values: a head-dependent level, a shard effect (rows of a shard are correlated)
    shard_eff = rng.normal(0, 0.3, (1, nL, nT, 1, layers, heads, shards))[..., sh]
    level = rng.uniform(0.5, 2, (1, nL, nT, 1, layers, heads, 1)) * \
        np.asarray(L, float)[None, :, None, None, None, None, None] ** 0.8
    grow = np.asarray(N, float)[None, None, None, :, None, None, None] ** 0.3
    sam = {}
    sam["distance"] = level * grow * np.exp(shard_eff + rng.normal(0, 0.4, shp))
    sam["distance_expected"] = level * 1.2 * np.exp(rng.normal(0, 0.4, shp))
    sam["distance_random"] = level * 0.5 * grow * np.exp(rng.normal(0, 0.4, shp))
    sam["distance_bound"] = sam["distance"] * np.exp(np.abs(rng.normal(1, 0.3, shp)))
    sam["ns_frac"] = np.clip(rng.normal(0.6, 0.15, shp) + 0.2 * shard_eff, 0, 1)
    sam["ns_upper"] = np.clip(sam["ns_frac"] + rng.uniform(0.05, 0.3, shp), 0, 1)
    sam["ns_lower"] = sam["ns_frac"] - rng.uniform(0.1, 0.9, shp)
    for k, n in enumerate(N):  # N >= L: the cell is skipped (NaN rows)
        for j, l in enumerate(L):
            if n >= l:
                for s in STEMS_N:
                    sam[s][:, j, :, k] = np.nan
    rshp = (1, nL, nT, layers, heads, S)
    Tarr = np.asarray(T)[None, None, :, None, None, None]
    sam["jac_exact"] = np.exp(rng.normal(0, 0.5, rshp) + shard_eff[:, :, :, 0]) / (4 * Tarr)
    sam["entropy_norm"] = np.clip(rng.uniform(0.1, 0.9, (1, nL, nT, layers, heads, 1)) +
                                  rng.normal(0, 0.05, rshp), 0, 1)
    for s in STEMS_N:
        if with_samples:
            var(s + "_sample", cell + ("sample",), sam[s])
        with np.errstate(invalid="ignore"):
            var(s + "_mean", cell, np.nanmean(sam[s], axis=-1))
            for q, name in ((0.5, "q50"), (0.05, "q05"), (0.95, "q95")):
                var("%s_%s" % (s, name), cell, np.nanquantile(sam[s], q, axis=-1))
        var(s + "_count", cell, np.sum(np.isfinite(sam[s]), axis=-1), "i4")
    for s in ("jac_exact", "entropy_norm"):
        if with_samples:
            var(s + "_sample", rowd + ("sample",), sam[s])
        var(s + "_mean", rowd, sam[s].mean(axis=-1))
    var("jac_exact_max", rowd, sam["jac_exact"].max(axis=-1))
    var("jac_fd_max", ("normalizer", "L", "T", "eps", "layer", "head"),
        sam["jac_exact"].max(axis=-1)[:, :, :, None])
    # KS tests and n_crit, with scipy
    for test in ("expected", "random"):
        D = np.full((1, nL, nT, nN, layers, heads), np.nan)
        P = D.copy()
        for idx in np.ndindex(nL, nT, nN, layers, heads):
            a = sam["distance"][(0,) + idx]
            b = sam["distance_" + test][(0,) + idx]
            a, b = a[np.isfinite(a)], b[np.isfinite(b)]
            if a.size and b.size:
                r = ks_2samp(a, b)
                D[(0,) + idx], P[(0,) + idx] = r.statistic, r.pvalue
        var("ks_%s_statistic" % test, cell, D)
        var("ks_%s_pvalue" % test, cell, P)
        nc = np.full((1, nL, nT, layers, heads), -1, np.int32)
        for idx in np.ndindex(nL, nT, layers, heads):
            p = P[(0, idx[0], idx[1], slice(None), idx[2], idx[3])]
            if np.isfinite(p).any():
                ok = [N[k] for k in range(nN) if np.isfinite(p[k]) and p[k] > ks_alpha]
                nc[(0,) + idx] = ok[0] if ok else 0
        v = var("n_crit_" + test, rowd, nc, "i4", fill=-1)
        v.flag_values = np.int32(0)
        frac = np.where(nc >= 1, nc / np.asarray(L)[None, :, None, None, None], np.nan)
        var("n_crit_%s_frac" % test, rowd, frac)
    zeros = np.zeros((1, nL, nT, nN, layers, heads), np.int32)
    checked = np.sum(np.isfinite(sam["distance"]), axis=-1).astype(np.int32)
    for name in ("thm1", "ns_upper", "ns_lower", "jac_exact", "lemma2"):
        var(name + "_violations", cell, zeros, "i4")
        var(name + "_checked", cell, checked, "i4")
    var("ns_lower_vacuous", cell, zeros, "i4")
    var("ns_upper_vacuous", cell, zeros, "i4")
    var("skipped_rows", cell, S - checked, "i4")
    ecell = ("normalizer", "L", "T", "N", "eps", "layer", "head")
    var("jac_fd_violations", ecell, zeros[:, :, :, :, None], "i4")
    var("jac_fd_checked", ecell, checked[:, :, :, :, None], "i4")
    ds.setncattr("metrics_version", np.int64(2))
    ds.seed = np.int64(file_seed)
    ds.ks_alpha = ks_alpha
    ds.rows = np.int64(rows)
    ds.shard_count = np.int64(shards)
    ds.model_requested = model
    ds.model_used = "path"
    ds.model_path = model
    ds.model_fallback = "false"
    ds.close()
    return path
