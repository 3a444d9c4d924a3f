"""intervals_nc: the bootstrap intervals as NetCDF variables, the layout the C reduction is to
write (docs/STATISTICS.md, "The intervals in the NetCDF file") and the report reads: for each
statistic NAME of the catalogue, NAME (the estimate), NAME_ci_low and NAME_ci_high, with a
leading normalizer dimension and a `head_set` dimension labelled by head_set_name ("all",
"sharp", "flat", "layer 0", ...). `write` is the reference writer (the tests use it to check
that the report reads what it specifies); `read` maps a file's variables onto the report's
head sets by name."""
import numpy as np
import netCDF4

from . import bootstrap
from .stats import CATALOGUE_DIMS, CATALOGUE_NAME

DIMS = {"L": "L", "T": "T", "N": "N", "set": "head_set"}


def write(ds, comp, ni=0, n_normalizers=1):
    """Write comp's statistics (normalizer ni) into the open, writable dataset ds."""
    names = comp.sets.names
    if "head_set" not in ds.dimensions:
        ds.createDimension("head_set", len(names))
        ds.createDimension("head_set_strlen", 16)
        v = ds.createVariable("head_set_name", "S1", ("head_set", "head_set_strlen"))
        v.long_name = "the heads a statistic is aggregated over"
        v.comment = ("all: every head; sharp / flat: the heads whose mean entropy / log L at the "
                     "cell's L and T is below / at least %g; layer k: the heads of layer k"
                     % 0.5)
        v[:] = netCDF4.stringtochar(np.array(names, "S16"))
    B = comp.W.shape[0] - 1 if comp.W is not None else 0
    lo_r, hi_r = bootstrap.interval_ranks(B) if B else (None, None)
    for key, nm in CATALOGUE_NAME.items():
        st = comp.stats[nm]
        dims = ("normalizer",) + tuple(DIMS[d] for d in st.dims)
        for suffix, arr, what in (("", st.est, "estimate"), ("_ci_low", st.lo, "lower end"),
                                  ("_ci_high", st.hi, "upper end")):
            v = ds.createVariable(nm + suffix, "f8", dims, fill_value=np.nan)
            v.units = "1"
            v.long_name = "%s of %s" % (what, nm) if suffix else nm
            if suffix:
                v.comment = ("%s of the 95 %% percentile interval of the shard bootstrap "
                             "(docs/STATISTICS.md)" % what)
            else:
                v.ancillary_variables = "%s_ci_low %s_ci_high" % (nm, nm)
                v.bootstrap_resamples = np.int64(B)
                v.confidence_level = 0.95
                v.interval_method = ("percentile, shard bootstrap: order statistics %s and %s of "
                                     "%d resamples" % (lo_r + 1 if B else "-",
                                                       hi_r + 1 if B else "-", B))
            full = np.full((n_normalizers,) + arr.shape, np.nan)
            full[ni] = arr
            v[:] = full


def read(path, set_names):
    """{name: (estimate, ci_low, ci_high)} of the catalogue variables a file holds, each with
    its head_set axis reordered to set_names (a set the file lacks is NaN)."""
    out = {}
    with netCDF4.Dataset(path) as ds:
        if "head_set_name" not in ds.variables:
            return out
        ds.set_auto_mask(False)
        file_sets = [str(x) for x in netCDF4.chartostring(ds["head_set_name"][:])]
        order = [file_sets.index(n) if n in file_sets else -1 for n in set_names]
        for nm in CATALOGUE_NAME.values():
            if not all(nm + s in ds.variables for s in ("", "_ci_low", "_ci_high")):
                continue
            arrs = []
            for s in ("", "_ci_low", "_ci_high"):
                v = ds[nm + s]
                a = np.array(v[:], dtype=float)
                ax = v.dimensions.index("head_set")
                a = np.moveaxis(a, ax, -1)
                b = np.full(a.shape[:-1] + (len(order),), np.nan)
                for k, j in enumerate(order):
                    if j >= 0:
                        b[..., k] = a[..., j]
                arrs.append(b)
            out[nm] = tuple(arrs)
    return out
