#!/usr/bin/python3
"""check_train_norms: a trained model's inference forward attends by its own config.json.

Usage: check_train_norms.py DUMP.nc CONFIG.json
  DUMP.nc      `normsweep dump --logits` of the model: attention_weight and logit (float32,
               layer, head, query, key)
  CONFIG.json  the model's config.json: normsweep_attn_normalizer (softmax1 or sigmoid),
               normsweep_attn_temperature T, normsweep_sigmoid_b b

Every causal weight (key <= query) is recomputed in double from the dumped float32 logit z by
the normalizer's defining formula, y = z / T:
  softmax1  a_j = exp(y_j) / (1 + sum_k exp(y_k))   (E. Miller, "Attention Is Off By One")
  sigmoid   a_j = 1 / (1 + exp(-(y_j + b)))          (Ramapuram et al. 2024; b from config.json)
and compared with attention_weight: the C weight is its own double evaluation rounded to float32,
so the two differ by at most half an ulp of float32 (2^-24 relative) plus the double evaluations'
differences (~1e-15 relative); we allow 2^-23 relative, and 2^-149 absolute (float32's smallest
subnormal) for weights that round to 0. A wrong bias, temperature or normalizer (softmax instead
of softmax1: every weight 1 + sum_k e^y_k / sum_k e^y_k times larger) errs by 1e-3 or more. Also:
exactly 0 above the diagonal, and some row's mass differs from 1 by more than 1e-3 (off the
simplex, as these normalizers are).
Exit 0 pass, 1 fail, 77 when netCDF4 or numpy is missing.
"""
import json
import sys

try:
    import netCDF4
    import numpy as np
except ImportError as e:
    print("check_train_norms: SKIP: %s" % e)
    sys.exit(77)


def reference(z, kind, T, b):
    y = z / T
    if kind == "softmax1":
        m = max(0.0, float(y.max()))  # the implicit logit 0 takes part in the shift
        e = np.exp(y - m)
        return e / (np.exp(-m) + e.sum())
    if kind == "sigmoid":
        return 1.0 / (1.0 + np.exp(-(y + b)))
    raise ValueError("not a normalizer off the simplex a model may name: %s" % kind)


def main(nc_path, cfg_path):
    cfg = json.load(open(cfg_path))
    kind = cfg["normsweep_attn_normalizer"]
    T = float(cfg.get("normsweep_attn_temperature", 1.0))
    b = float(cfg["normsweep_sigmoid_b"]) if kind == "sigmoid" else None
    ds = netCDF4.Dataset(nc_path)
    ds.set_auto_mask(False)
    w = np.asarray(ds["attention_weight"][:], dtype=np.float64)
    z = np.asarray(ds["logit"][:], dtype=np.float64)
    n_layer, n_head, L, _ = w.shape
    worst, bad, off_simplex, rows = 0.0, 0, 0, 0
    for l in range(n_layer):
        for h in range(n_head):
            for q in range(L):
                got = w[l, h, q, :q + 1]
                want = reference(z[l, h, q, :q + 1], kind, T, b)
                err = np.abs(got - want)
                tol = 2.0 ** -23 * want + 2.0 ** -149
                worst = max(worst, float((err / np.maximum(want, 1e-300)).max()))
                bad += int((err > tol).sum())
                bad += int((w[l, h, q, q + 1:] != 0.0).sum())
                off_simplex += abs(float(got.sum()) - 1.0) > 1e-3
                rows += 1
    ok = bad == 0 and off_simplex > 0
    print("check_train_norms: %s T=%g%s: %d rows, worst relative difference %.3g, %d off the "
          "bound, %d rows with mass off 1 by > 1e-3%s"
          % (kind, T, "" if b is None else " b=%.10g" % b, rows, worst, bad, off_simplex,
             "" if ok else "  FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
