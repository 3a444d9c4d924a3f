#!/usr/bin/python3
"""layout1: rewrite a sweep file of output layout 2 in layout 1 (the layout before issue 34,
docs/OUTPUT.md "Output layouts"), for the test that the report reads both layouts alike.

Usage: layout1.py IN.nc OUT.nc

Written from the description of layout 1, not from the report's reader: the normalizer an
integer index with the text label normalizer_name; <stem>_min, _q05, _q50, _q95, _max instead of
<stem>_quantile; the Jacobian counts repeated along N (layout 1 counted a row in every N cell it
was analysed at: the same number where every row is analysed, as in the grids this is used on --
checked); n_crit = 0 where no N of the grid passes and no n_crit_*_status; no output_layout."""
import sys

import netCDF4
import numpy as np

STATS = {0.0: "min", 0.05: "q05", 0.5: "q50", 0.95: "q95", 1.0: "max"}
N_FREE = ("jac_exact_violations", "jac_exact_checked", "lemma2_violations", "lemma2_checked",
          "jac_fd_violations", "jac_fd_checked")


def copy_attrs(src, dst, skip=()):
    for a in src.ncattrs():
        if a not in skip and a != "_FillValue":
            dst.setncattr(a, src.getncattr(a))


def new_var(out, name, v, dims, data):
    fill = getattr(v, "_FillValue", None)
    w = out.createVariable(name, v.dtype, dims, fill_value=fill)
    copy_attrs(v, w)
    w[:] = data
    return w


def main(src_path, dst_path):
    src = netCDF4.Dataset(src_path)
    src.set_auto_mask(False)
    out = netCDF4.Dataset(dst_path, "w", format="NETCDF4")
    for d, dim in src.dimensions.items():
        if d != "quantile":
            out.createDimension(d, len(dim))
    copy_attrs(src, out, skip=("output_layout",))
    q = [float(x) for x in src["quantile"][:]]
    skipped = src["skipped_rows"][:]
    if skipped.any():
        sys.exit("layout1: rows are skipped in this grid: layout 1's per-N Jacobian counts differ")
    for name, v in src.variables.items():
        if name in ("quantile",) or name.endswith("_status"):
            continue
        if name == "normalizer":
            labels = out.createVariable("normalizer_name", "S1", v.dimensions)
            labels._Encoding = "utf-8"
            labels.long_name = "attention normalizer"
            v.set_auto_chartostring(False)
            labels.set_auto_chartostring(False)
            labels[:] = v[:]
            idx = out.createVariable("normalizer", "i4", ("normalizer",))
            idx.long_name = "attention normalizer index (label: normalizer_name)"
            idx[:] = np.arange(len(src.dimensions["normalizer"]))
        elif name.endswith("_quantile"):
            for k, p in enumerate(q):
                new_var(out, "%s_%s" % (name[:-len("_quantile")], STATS[p]), v,
                        v.dimensions[1:], v[:][k])
        elif name in N_FREE:  # (normalizer, L, T[, eps], layer, head): N inserted after T
            x = np.repeat(np.expand_dims(v[:], 3), len(src.dimensions["N"]), axis=3)
            new_var(out, name, v, v.dimensions[:3] + ("N",) + v.dimensions[3:], x)
        elif name.startswith("n_crit_") and name + "_status" in src.variables:
            # n_crit_expected, n_crit_random: layout 1 wrote 0 for "none of the grid's N passes"
            # (the interval statistics n_crit_*_frac_*hmedian* have no status and stay as they are)
            status = src[name + "_status"][:]
            w = new_var(out, name, v, v.dimensions, np.where(status == 1, 0, v[:]))
            w.flag_values = np.int32(0)
            w.flag_meanings = "none_of_the_grid_N_passes"
            w.delncattr("ancillary_variables")
        else:
            new_var(out, name, v, v.dimensions, v[:])
    out.close()
    src.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
