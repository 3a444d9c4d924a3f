#!/usr/bin/python3
"""check_cf: the CF-1.8 rules a normsweep sweep file is held to, checked here because Debian 12
packages no CF checker (cfchecker and the IOOS compliance-checker are only on PyPI; docs/OUTPUT.md,
"CF"). Usage: check_cf.py RUN.nc. Prints each problem; exit 1 if any.

Rules (CF-1.8 section in brackets):
- global attributes Conventions ("CF-1.x"), title, institution, source, history, references (the
  paper), comment, and output_layout = 2 [2.6];
- every variable has long_name or standard_name [3.1]; every `units` is a UDUNITS-2 unit
  (`udunits2`, Debian's udunits-bin, must parse it) convertible to "1": every quantity of the file
  is a number [3.1] ("nat" parses -- as nano technical atmospheres, a pressure -- and fails);
- index coordinates carry no units; every dimension coordinate is 1-D, monotonic and without
  missing values [5]; the normalizer is a text coordinate (a char array, its last dimension the
  string length [2.2]) with unique names;
- every name a `cell_methods` gives is a dimension of the variable, a scalar coordinate or `area`
  [7.3]; every name in `coordinates` is a variable whose dimensions are among the variable's
  [5]; every name in `ancillary_variables` is a variable [3.4];
- flag variables: flag_values of the variable's type, as many as flag_meanings' words, distinct,
  and every value of the data among them [3.5];
- _FillValue of the variable's type [2.5.1]; counts have none (integers in xarray);
- with keep_samples: false no `sample` dimension and none of sample, sample_shard, sample_row.
Then the file is opened with xarray (CF decoding) and selected by the normalizer's name."""
import subprocess
import sys

import netCDF4
import numpy as np
import xarray as xr

INDEX_COORDS = ("normalizer", "L", "N", "layer", "head", "shard", "sample")
COUNT_SUFFIXES = ("_violations", "_checked", "_vacuous", "_undefined", "_count", "_status")


def udunits_dimensionless(unit):
    """None when udunits2 parses unit and converts it to "1", else why not."""
    r = subprocess.run(["udunits2", "-H", unit, "-W", "1"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, check=False)
    if r.returncode != 0 or r.stderr.strip() or "=" not in r.stdout:
        return (r.stderr.strip() or r.stdout.strip() or "exit %d" % r.returncode).splitlines()[0]
    return None


def cell_method_names(text):
    """The names of a cell_methods string: each word ending in ':' outside parentheses."""
    names, depth = [], 0
    for word in text.replace("(", " ( ").replace(")", " ) ").split():
        if word == "(":
            depth += 1
        elif word == ")":
            depth -= 1
        elif depth == 0 and word.endswith(":"):
            names.append(word[:-1])
    return names


def check_variables(ds, problems):
    units = {}
    for name, v in ds.variables.items():
        attrs = v.ncattrs()
        if "long_name" not in attrs and "standard_name" not in attrs:
            problems.append("%s has no long_name" % name)
        if "units" in attrs:
            units.setdefault(str(v.units), []).append(name)
            if name in INDEX_COORDS:
                problems.append("index coordinate %s has units %r" % (name, v.units))
        if "cell_methods" in attrs:
            for n in cell_method_names(str(v.cell_methods)):
                if n not in v.dimensions and n != "area" and not (
                        n in ds.variables and ds.variables[n].ndim == 0):
                    problems.append("%s: cell_methods names %r, not a dimension of the variable "
                                    "(%s)" % (name, n, ", ".join(v.dimensions)))
        for n in str(getattr(v, "coordinates", "")).split():
            if n not in ds.variables:
                problems.append("%s: coordinates names %r, which the file lacks" % (name, n))
            elif not set(ds.variables[n].dimensions) - {d for d in ds.variables[n].dimensions
                                                         if d.endswith("strlen")} <= \
                    set(v.dimensions):
                problems.append("%s: coordinate %s has dimensions %s outside the variable's"
                                % (name, n, ds.variables[n].dimensions))
        for n in str(getattr(v, "ancillary_variables", "")).split():
            if n not in ds.variables:
                problems.append("%s: ancillary variable %r missing" % (name, n))
        if "_FillValue" in attrs and np.asarray(v._FillValue).dtype != v.dtype:
            problems.append("%s: _FillValue of type %s, the variable's is %s"
                            % (name, np.asarray(v._FillValue).dtype, v.dtype))
        if name.endswith(COUNT_SUFFIXES) and not name.startswith("n_crit_") or \
                name.endswith("_status"):
            if v.dtype.kind not in "iu" or "_FillValue" in attrs:
                problems.append("count %s: type %s, _FillValue %s (an integer without one "
                                "expected)" % (name, v.dtype, "_FillValue" in attrs))
        if "flag_values" in attrs:
            check_flags(name, v, problems)
    for unit, names in sorted(units.items()):
        why = udunits_dimensionless(unit)
        if why:
            problems.append("units %r (%s): not a UDUNITS dimensionless unit: %s"
                            % (unit, ", ".join(names[:3]), why))
    return len(units)


def check_flags(name, v, problems):
    values = np.atleast_1d(v.flag_values)
    meanings = str(getattr(v, "flag_meanings", "")).split()
    if values.dtype != v.dtype:
        problems.append("%s: flag_values of type %s, the variable's is %s"
                        % (name, values.dtype, v.dtype))
    if len(values) != len(meanings) or len(set(values.tolist())) != len(values):
        problems.append("%s: flag_values %s and flag_meanings %s do not pair up"
                        % (name, values.tolist(), meanings))
    v.set_auto_mask(False)
    stray = set(np.unique(np.asarray(v[:])).tolist()) - set(values.tolist())
    if stray:
        problems.append("%s: values %s are not among flag_values" % (name, sorted(stray)))


def check_coordinates(ds, problems):
    for d in ds.dimensions:
        if d not in ds.variables or d == "normalizer":
            continue
        c = ds.variables[d]
        c.set_auto_mask(False)
        x = np.asarray(c[:], dtype=float)
        if c.ndim != 1 or np.isnan(x).any() or (x.size > 1 and not (
                np.all(np.diff(x) > 0) or np.all(np.diff(x) < 0))):
            problems.append("coordinate %s is not 1-D, monotonic and without missing values" % d)
    v = ds.variables.get("normalizer")
    if v is None or v.dtype.kind != "S" or v.ndim != 2 or v.dimensions[0] != "normalizer":
        problems.append("normalizer is not a text coordinate (char normalizer(normalizer, strlen))")
    else:
        names = [str(x) for x in v[:]]
        if len(set(names)) != len(names) or not all(names):
            problems.append("normalizer names %r are not unique and non-empty" % names)


def main(path):
    problems = []
    ds = netCDF4.Dataset(path)
    for a in ("Conventions", "title", "institution", "source", "history", "references", "comment"):
        if not str(getattr(ds, a, "")).strip():
            problems.append("global attribute %s missing or empty" % a)
    if not str(getattr(ds, "Conventions", "")).startswith("CF-1."):
        problems.append("Conventions = %r" % getattr(ds, "Conventions", None))
    if "2508.17821" not in str(getattr(ds, "references", "")):
        problems.append("references do not cite the paper")
    if int(getattr(ds, "output_layout", 0)) != 2:
        problems.append("output_layout = %r, expected 2" % getattr(ds, "output_layout", None))
    n_units = check_variables(ds, problems)
    check_coordinates(ds, problems)
    if str(getattr(ds, "keep_samples", "")) == "false":
        for n in ("sample", "sample_shard", "sample_row"):
            if n in ds.variables or n in ds.dimensions:
                problems.append("keep_samples: false, yet the file has %s" % n)
    n_vars = len(ds.variables)
    ds.close()
    # xarray, as a reader who knows CF: the normalizer selected by its name, counts integers
    xds = xr.open_dataset(path)
    try:
        first = str(xds["normalizer"].values[0])
        xds["distance_mean"].sel(normalizer=first, L=int(xds["L"][-1]), T=float(xds["T"][0]),
                                 N=int(xds["N"][0]))
        xds["distance_quantile"].sel(quantile=0.5, normalizer=first)
    except Exception as exc:  # noqa: BLE001 - any failure is the finding
        problems.append("selection by coordinate values fails: %s" % exc)
    for name, v in xds.data_vars.items():
        if name.endswith(COUNT_SUFFIXES) and v.dtype.kind not in "iu":
            problems.append("count %s is %s in xarray, not an integer" % (name, v.dtype))
    for p in problems:
        print("check_cf:", p)
    print("check_cf: %d variables, %d distinct units checked with udunits2, %d problems"
          % (n_vars, n_units, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
