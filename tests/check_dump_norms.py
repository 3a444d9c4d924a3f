#!/usr/bin/python3
"""check_dump_norms: recompute the metrics of a `normsweep dump --N ... --logits` file made with
one of issue 36's normalizers (softmax1, sigmoid, softpick, relu, entmax, stickbreaking: docs/
METRICS.md section 2.1), or with any normalizer but ssmax and `--sink-view` (the sink-excluded
view, section 8.2: label "NAME, sink excluded"), from the dumped float32 logits and value
vectors, independently of the C code, and compare.

The sink-excluded view: a over all L keys from the formula, key 0 dropped, m = sum of the other
L - 1, p = a_{1..} / m; every shape metric over keys 1..L-1 and their vectors (delta and, with raw
vectors, M of those keys; N < L - 1); sink_mass = p_0 of the view (the window's key 1);
jac_exact = the spectral norm (numpy's SVD) of the trailing (L - 1) x (L - 1) block of the full
closed-form Jacobian of a (softmax, softmax1: (diag(a) - a a^T) / T; the others as below;
missing for softpick and stickbreaking); jac_lemma2 missing; jac_fd moves z_1..z_{L-1} along
u0 = (e_a - e_b)/sqrt 2 of the two largest of them (z_0 held fixed) and differences a_{1..}.

Usage: check_dump_norms.py OUT.nc [--expect-empty K]
  --expect-empty K   exactly K (layer, head, T) rows must be empty (mass 0); default: any
Exit 0 pass, 1 fail, 77 when mpmath or numpy is missing.

The reference: the weights a from the published formulas at 60 significant digits
(tests/check_norm_rows.py's ref_weights: mpmath's exponent range is unbounded, so nothing under-
or overflows), m = sum a, p = a / m, log p, all exact to far below a double's precision and then
rounded; the shape metrics from p with tests/check_dump_metrics.py's numpy evaluation of the
definitions (row_metrics, xi_values: Theorem 1 and 2); the Jacobian of a from its closed form:
  softmax1  (diag(a) - a a^T) / T            (d/dz of e^(y_j) / (1 + sum_k e^(y_k)))
  sigmoid   diag(a (1 - a)) / T
  relu      diag([z_j > 0]) / (T L)          (relu'(0) = 0)
  entmax    (diag(w) - w w^T / sum w) / T, w = p^(2 - alpha) on the support (Peters, Niculae,
            Martins 2019)
its spectral norm by numpy (eigvalsh); softpick and stickbreaking: jac_exact must be missing.
jac_fd (dump with --probes 0): the difference quotient ||a(z + eps u0) - a(z)|| / eps along
u0 = (e_a - e_b)/sqrt 2, a and b the two largest logits (ties: the smaller index), with z + eps u0
formed in double as the C code forms it.

Tolerances (why):
  weights, m, p, sink_mass: relative TOL_W = 32 eps L kappa, kappa = 1 + max |y|, y = z / T: each
    C weight is e^(a sum of at most L + 2 terms), each carrying the rounding of y (absolute |y|
    eps) and a few ulps; e^x turns absolute error in x into relative error in e^x
    (tests/check_norm_rows.py's bound, which its 400-digit checks confirm).
  Theorem 1 and 2 quantities, entropy: 1e-9 relative plus TOL_W (L + 1) max(1, M)^2 absolute:
    every one is a sum of at most L terms Lipschitz in p with constant <= (L + 1) M^2 (entropy:
    |log p| + 1 per term, max |log p| is added), and both sides do double arithmetic on the same
    float32 inputs otherwise; a wrong formula shows at 1e-3 or more.
  jac_exact: 64 eps L kappa relative plus 1e-13 / T absolute (eigvalsh is accurate to ~1e-16
    of ||J||, the secular bisection to a few ulps).
  jac_fd: FD_REL = 1e-7 relative plus 4 TOL_W max(a) sqrt(L) / eps absolute: the two weight
    vectors' errors do not cancel in the difference.
  Counts exactly: which rows are empty (mass 0 exactly, sink_mass and every shape metric NaN), the
    top-N sets (cells whose N-th and (N+1)-th p are within 1e-9 relative are not compared: the C
    code ranks by log p in double), ns_frac away from ties with r (1e-12), distance_random NaN at
    every N for stickbreaking (its random-subset reference is not exchangeable).
"""
import itertools
import math
import os
import sys

try:
    import mpmath
    import numpy as np
    import netCDF4
except ImportError:
    print("SKIP: python3-mpmath, python3-numpy or python3-netcdf4 is not installed")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_norm_rows import ref_weights  # noqa: E402  (the published formulas, in mpmath)
from check_dump_metrics import (Checker, read, row_metrics, row_vectors, xi_values,  # noqa: E402
                                pair_dist, subset_distance)

mpmath.mp.dps = 60
EPS = 2.0 ** -52
EXACT_REL = 1e-9
FD_REL = 1e-7
ENUM_MAX = 3000
TN = ["distance", "distance_d1", "distance_bound", "distance_expected", "distance_random",
      "ns_frac", "ns_lower", "ns_upper"]
SHAPE = TN + ["entropy", "entropy_norm", "n_eff", "sink_mass"]
VIEW_SUFFIX = ", sink excluded"
ALL = TN + ["delta", "jac_exact", "jac_lemma2", "entropy", "entropy_norm", "n_eff", "jac_fd",
            "mass", "sink_mass"]


def parse_label(label):
    """'entmax alpha=1.3' -> ('entmax', '1.3'); 'sigmoid b=-log(L)' -> ('sigmoid', '-')."""
    name, _, rest = label.partition(" ")
    if not rest:
        return name, "-"
    key, _, value = rest.partition("=")
    if name == "sigmoid" and value == "-log(L)":
        return name, "-"
    return name, float(value)  # the double the C code used (not the decimal)


def exact_row(kind, param, z, T, off=0):
    """a, m, p (mpf lists; the sink-excluded view's when off = 1: a over every key, key 0
    dropped), whether the row is empty, and the full row's a."""
    full, _ = ref_weights(kind, param, [float(v) for v in z], T)
    a = full[off:]
    m = mpmath.fsum(a)
    if m == 0:
        return a, m, None, True, full
    return a, m, [v / m for v in a], False, full


def jac_view_norm(kind, param, full, z, T, L):
    """The norm of the trailing (L-1) x (L-1) block of d a / d z at the full row a (closed forms),
    NaN for softpick and stickbreaking."""
    if kind in ("softpick", "stickbreaking"):
        return math.nan
    af = np.array([float(v) for v in full])
    if kind in ("softmax", "softmax1"):
        J = (np.diag(af) - np.outer(af, af)) / T
    elif kind == "sigmoid":
        J = np.diag(af * (1 - af)) / T
    elif kind == "relu":
        J = np.diag((np.asarray(z) > 0).astype(float)) / (T * L)
    else:  # sparsemax, entmax15, entmax: (diag(w) - w w^T / sum w) / T, w = a^(2 - alpha)
        alpha = {"sparsemax": mpmath.mpf(2), "entmax15": mpmath.mpf(1.5)}.get(kind)
        alpha = mpmath.mpf(param) if alpha is None else alpha
        w = np.array([float(v ** (2 - alpha)) if v > 0 else 0.0 for v in full])
        J = (np.diag(w) - np.outer(w, w) / w.sum()) / T
    return float(np.linalg.norm(J[1:, 1:], 2)) if L > 1 else 0.0


def jac_norm(kind, param, a, p, z, T, L):
    if kind in ("softpick", "stickbreaking"):
        return math.nan
    af = np.array([float(v) for v in a])
    if kind == "softmax1":
        return float(np.max(np.linalg.eigvalsh(np.diag(af) - np.outer(af, af)))) / T
    if kind == "sigmoid":
        return float(max(v * (1 - v) for v in a)) / T
    if kind == "relu":
        return 1.0 / (T * L) if np.any(np.asarray(z) > 0) else 0.0
    if kind == "entmax":
        alpha = mpmath.mpf(param)
        w = np.array([float(v ** (2 - alpha)) if v > 0 else 0.0 for v in p])
        if w.sum() == 0:
            return 0.0
        return float(np.max(np.linalg.eigvalsh(np.diag(w) - np.outer(w, w) / w.sum()))) / T
    raise ValueError(kind)


def check(path, expect_empty):
    ck = Checker()
    ds = netCDF4.Dataset(path)
    label = ds.getncattr("normalizer")
    view = label.endswith(VIEW_SUFFIX)
    kind, param = parse_label(label[:-len(VIEW_SUFFIX)] if view else label)
    off = 1 if view else 0
    if kind == "ssmax" or (not view and kind not in ("softmax1", "sigmoid", "softpick", "relu",
                                                     "entmax", "stickbreaking")):
        print(f"check_dump_norms: {label} is not one of issue 36's normalizers or views")
        return 1
    for att in ("mass_rule", "shape_rule", "sink_rule", "sigmoid_bias_rule", "stickbreaking_rule"):
        ck.true(f"global attribute {att}", att in ds.ncattrs())
    L = int(ds.getncattr("length"))
    row = int(ds.getncattr("metrics_row"))
    sphere = ds.getncattr("sphere") == "true"
    probes = int(ds.getncattr("probes"))
    Ns = [int(n) for n in ds.variables["N"][:]]
    Ts = [float(t) for t in ds.variables["T"][:]]
    epss = [float(e) for e in ds.variables["eps"][:]]
    V, Z = read(ds, "value"), read(ds, "logit")
    got = {name: read(ds, name) for name in ALL}
    NL, H = Z.shape[0], Z.shape[1]
    n_empty = n_tie = 0
    Lf, L = L, L - off  # the row's keys; the keys analysed (the view: keys 1..Lf-1)
    for l in range(NL):
        for h in range(H):
            x, M = row_vectors(V, l, h, Lf, sphere)
            x = x[off:]
            if view and not sphere:
                M = float(np.sqrt((x * x).sum(axis=1)).max())
            z = Z[l, h, row, :Lf]
            zk = z[off:]
            delta = float(pair_dist(x, x)[~np.eye(L, dtype=bool)].min()) if L > 1 else math.nan
            ck.close(f"delta[{label} l{l} h{h}]", got["delta"][l, h], delta, EXACT_REL,
                     1e-12 / max(delta, 1e-3))
            for t, T in enumerate(Ts):
                where = f"{label} l{l} h{h} T={T}"
                y = z / T
                kappa = 1.0 + float(np.max(np.abs(y)))
                tol_w = 32 * EPS * Lf * kappa
                a, m, p, empty, full = exact_row(kind, param, z, T, off)
                ck.close(f"mass[{where}]", got["mass"][t, l, h], float(m), tol_w, 1e-300)
                ck.true(f"jac_lemma2[{where}] missing", math.isnan(got["jac_lemma2"][t, l, h]))
                jn = (jac_view_norm(kind, param, full, z, T, Lf) if view
                      else jac_norm(kind, param, a, p, z, T, L))
                ck.close(f"jac_exact[{where}]", got["jac_exact"][t, l, h], jn,
                         64 * EPS * Lf * kappa, 1e-13 / T)
                if probes == 0 and L >= 2:
                    order_z = np.lexsort((np.arange(L), -zk))
                    u0 = np.zeros(Lf)
                    u0[off + order_z[0]], u0[off + order_z[1]] = math.sqrt(0.5), -math.sqrt(0.5)
                    for e, eps in enumerate(epss):
                        zp = z + eps * u0  # in double, as the C code forms it (z_0 + 0 = z_0)
                        ap, _ = ref_weights(kind, param, [float(q) for q in zp], T)
                        want = float(mpmath.sqrt(mpmath.fsum((ap[j] - full[j]) ** 2
                                                             for j in range(off, Lf)))) / eps
                        amax = max(float(q) for q in full + ap)
                        ck.close(f"jac_fd[{where} eps={eps}]", got["jac_fd"][t, e, l, h], want,
                                 FD_REL, 4 * tol_w * amax * math.sqrt(L) / eps + 1e-300)
                if empty:
                    n_empty += 1
                    ck.true(f"mass[{where}] is 0 exactly (empty row)", got["mass"][t, l, h] == 0.0)
                    for name in SHAPE:
                        arr = got[name]
                        vals = arr[t, :, l, h] if name in TN else [arr[t, l, h]]
                        ck.true(f"{name}[{where}] missing on an empty row",
                                all(math.isnan(q) for q in vals))
                    continue
                pf = np.array([float(q) for q in p])
                ck.close(f"sink_mass[{where}]", got["sink_mass"][t, l, h], pf[0], tol_w, 1e-300)
                abs_w = tol_w * (L + 1) * max(1.0, M) ** 2
                logp = [float(mpmath.log(q)) if q > 0 else -math.inf for q in p]
                Hw = float(-mpmath.fsum(q * mpmath.log(q) for q in p if q > 0))
                lmax = max(abs(q) for q in logp if q > -math.inf)
                ck.close(f"entropy[{where}]", got["entropy"][t, l, h], Hw, EXACT_REL,
                         abs_w * (1 + lmax))
                if L >= 2:
                    ck.close(f"entropy_norm[{where}]", got["entropy_norm"][t, l, h],
                             Hw / math.log(L), EXACT_REL, abs_w * (1 + lmax))
                ck.close(f"n_eff[{where}]", got["n_eff"][t, l, h], math.exp(Hw), EXACT_REL,
                         abs_w * (1 + lmax) * math.exp(Hw))
                # the top N by exact p (ties by index)
                order = sorted(range(L), key=lambda j: (-p[j], j))
                for n, N in enumerate(Ns):
                    cell = lambda name: got[name][t, n, l, h]
                    if N >= L:
                        for name in TN:
                            ck.true(f"{name}[{where} N={N}] missing (N >= L)", math.isnan(cell(name)))
                        continue
                    hi_p, lo_p = p[order[N - 1]], p[order[N]]
                    if hi_p != lo_p and hi_p - lo_p <= 1e-9 * hi_p:
                        n_tie += 1
                        continue
                    order_np = np.array(order)
                    rm = row_metrics(pf, x, M, order_np, N)
                    for name in ("distance", "distance_d1", "distance_expected"):
                        ck.close(f"{name}[{where} N={N}]", cell(name), rm[name], EXACT_REL, abs_w)
                    bscale = (M * M * (L - N + 2) + 2 * M) * max(tol_w, 1e-14)
                    ck.close(f"distance_bound[{where} N={N}]", cell("distance_bound"),
                             rm["distance_bound"], EXACT_REL, bscale)
                    if sphere:  # Theorem 1 is about vectors of norm <= 1: with raw vectors
                        # of norm < 1, ||s|| can exceed max ||x_j||^2 (a row with abar = 1)
                        ck.true(f"Theorem 1 holds [{where} N={N}]", cell("distance") <=
                                cell("distance_bound") + 1e-9 * abs(cell("distance_bound")))
                    r, dist, I = rm["r"], rm["dist"], rm["I"]
                    if float(np.min(np.abs(dist[I] - r))) > 1e-12 * (1 + r) + abs_w:
                        ck.close(f"ns_frac[{where} N={N}]", cell("ns_frac"), rm["ns_frac"], 0.0)
                    xi = xi_values(pf, I, M, delta)
                    ck.close(f"ns_upper[{where} N={N}]", cell("ns_upper"),
                             float(np.mean(np.exp(-(r - xi) ** 2 / (16 * M * M)))), EXACT_REL, abs_w)
                    if r == 0.0:
                        ck.true(f"ns_lower[{where} N={N}] missing when r = 0", math.isnan(cell("ns_lower")))
                    else:
                        ck.close(f"1 - ns_lower[{where} N={N}]", 1.0 - cell("ns_lower"),
                                 float(xi.sum()) / (r * N), EXACT_REL, abs_w / r)
                    dr = cell("distance_random")
                    if kind == "stickbreaking":
                        ck.true(f"distance_random[{where} N={N}] missing (stick-breaking)", math.isnan(dr))
                        continue
                    A_N = float(pf[order_np[:N]].sum())
                    ck.true(f"distance_random[{where} N={N}] = {dr!r} in [0, M (1 + (L - N) A_N)]",
                            np.isfinite(dr) and 0 <= dr <= M * (1 + (L - N) * A_N) * (1 + 1e-12))
                    if math.comb(L, N) <= ENUM_MAX:
                        vals = np.array([subset_distance(pf, x, S)
                                         for S in itertools.combinations(range(L), N)])
                        k = int(np.argmin(np.abs(vals - dr)))
                        ck.close(f"distance_random[{where} N={N}] is d of some {N}-subset", dr,
                                 float(vals[k]), EXACT_REL, abs_w)
    if expect_empty is not None:
        ck.true(f"{n_empty} empty rows, expected {expect_empty}", n_empty == expect_empty)
    print(f"{path} ({label}): {ck.checked} comparisons, {ck.failures} failed, {n_empty} empty "
          f"rows, {n_tie} near-tie cells not compared; closest pass: |diff| = {ck.worst[0]:.2g} x "
          f"tolerance ({ck.worst[1]})")
    ds.close()
    return 1 if ck.failures or ck.checked == 0 else 0


def main(argv):
    if len(argv) == 2:
        return check(argv[1], None)
    if len(argv) == 4 and argv[2] == "--expect-empty":
        return check(argv[1], int(argv[3]))
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
