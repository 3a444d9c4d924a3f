#!/usr/bin/python3
"""check_norm_rows: every normalizer of src/norm (docs/METRICS.md section 2, issue 36's six off
the simplex included) against this file's own evaluation of the published formulas at 400
significant digits (mpmath), on hand-made and random rows.

Usage: check_norm_rows.py DRIVER [--negative]   (DRIVER = the tests/norm_rows program)
Exit 0 when every check passes, 1 otherwise, 77 when mpmath or numpy is missing. With
--negative, the driver's answers are first spoiled in three places (an empty softpick row's m set
to 1e-300, a softmax1 weight moved by 1e-9 relative, a stick-breaking Jacobian norm by 1e-9
relative), and the exit is 0 only when each of the three is caught.

The reference, independent of the C code (no shifts, no log-space tricks: mpmath's exponent
range is unbounded, so nothing under- or overflows):
  softmax1      a_j = e^(y_j) / (1 + sum_k e^(y_k))                       (Miller 2023)
  sigmoid       a_j = 1 / (1 + e^-(y_j + b)), b = -log(L) by default      (Ramapuram et al. 2024)
  softpick      a_j = max(e^(y_j) - 1, 0) / sum_k |e^(y_k) - 1|, 0 when the sum is 0
                                                                          (Zuhri et al. 2025)
  relu          a_j = max(y_j, 0) / L                                     (Wortsman et al. 2023)
  stickbreaking beta = 1 / (1 + e^-y), a_j = beta_j prod_{k > j} (1 - beta_k)  (Tan et al. 2024)
  entmax        alpha-entmax: a_j = ((alpha - 1) y_j - tau)_+^(1 / (alpha - 1)), tau by 200
                bisection steps, then Newton's method on the support to all 400 digits
                (Peters, Niculae, Martins 2019); sparsemax is alpha = 2
  softmax, ssmax  e^(c y_j) / sum_k e^(c y_k), c = 1 or s log(L)
with y = z / T. m = sum a, p = a / m, log p. The Jacobian da/dz by central differences at 400
digits (h = 1e-100: truncation error ~1e-200 relative, and the cancellation of a(z + h) - a(z - h)
leaves an absolute error ~1e-300, below every normal double: exact entries of 1e-170 beside
weights of 1, as in a sigmoid row at small T or stick-breaking when every beta rounds to 1), its spectral norm by
numpy's SVD (LAPACK) of the rounded matrix, and the VJP J^T g.

Tolerances (why they are that size). Each C weight is e^(a sum of at most L + 2 terms), each
term carrying the rounding of y = z / T (relative eps, so absolute |y| eps) and a few ulps of
its own; e^x turns an absolute error in x into a relative error. So with kappa = 1 + max |y|:
  weights, p:    relative 32 eps L kappa  (absolute 1e-300 below 1e-290: subnormal results)
  log p:         absolute 32 eps (L kappa + |log p|)
  m, log m:      the same as a weight, over the sum of L of them
  ||J||_2, VJP:  relative 64 eps L kappa (J's entries are products of two such weights; the
                 secular bisection and the Jacobi SVD each add O(L eps))
Counts are compared exactly: the support (a_j > 0) and its size, exact zeros, m == 0 (and
log m == -inf exactly when the reference mass is 0). For the entmaxes, an entry within 1e-12 of
the threshold is left out of the support count: bisection can put it on either side.
"""
import math
import sys

try:
    import mpmath
    import numpy as np
except ImportError:
    print("SKIP: python3-mpmath or python3-numpy is not installed")
    sys.exit(77)

import subprocess

mp = mpmath.mp
mp.dps = 400
EPS = 2.0 ** -52


def ref_weights(kind, param, z, T):
    """a (mpf list) from the published formula; the entmax threshold margin per entry."""
    L = len(z)
    y = [mpmath.mpf(v) / mpmath.mpf(T) for v in z]
    margin = None
    if kind == "softmax1":
        e = [mpmath.exp(v) for v in y]
        s = 1 + mpmath.fsum(e)
        a = [v / s for v in e]
    elif kind == "sigmoid":
        b = -mpmath.log(L) if param == "-" else mpmath.mpf(param)
        a = [1 / (1 + mpmath.exp(-(v + b))) for v in y]
    elif kind == "softpick":
        d = mpmath.fsum(abs(mpmath.exp(v) - 1) for v in y)
        a = [max(mpmath.exp(v) - 1, 0) / d if d != 0 else mpmath.mpf(0) for v in y]
    elif kind == "relu":
        a = [max(v, 0) / L for v in y]
    elif kind == "stickbreaking":
        beta = [1 / (1 + mpmath.exp(-v)) for v in y]
        one_minus = [1 / (1 + mpmath.exp(v)) for v in y]  # 1 - beta, without cancellation
        a = []
        for j in range(L):
            prod = mpmath.mpf(1)
            for k in range(j + 1, L):
                prod *= one_minus[k]
            a.append(beta[j] * prod)
    elif kind in ("softmax", "ssmax"):
        c = 1 if kind == "softmax" else (mpmath.mpf(param) if param != "-" else 1) * mpmath.log(L)
        e = [mpmath.exp(c * v) for v in y]
        s = mpmath.fsum(e)
        a = [v / s for v in e]
    elif kind in ("sparsemax", "entmax15", "entmax"):
        alpha = {"sparsemax": mpmath.mpf(2), "entmax15": mpmath.mpf(1.5)}.get(kind)
        if alpha is None:
            alpha = mpmath.mpf(1.5) if param == "-" else mpmath.mpf(param)
        x = [(alpha - 1) * v for v in y]
        ex = 1 / (alpha - 1)
        lo, hi = max(x) - 1, max(x)

        def total(t):
            return mpmath.fsum(max(v - t, 0) ** ex for v in x)

        for _ in range(200):
            mid = (lo + hi) / 2
            if total(mid) >= 1:
                lo = mid
            else:
                hi = mid
        tau = (lo + hi) / 2
        for _ in range(12):  # Newton: f(tau) = total(tau) - 1 is smooth on the support found
            f = total(tau) - 1
            fp = -ex * mpmath.fsum((v - tau) ** (ex - 1) for v in x if v > tau)
            tau -= f / fp
        a = [max(v - tau, 0) ** ex for v in x]
        margin = [abs(v - tau) for v in x]
    else:
        raise ValueError(kind)
    return a, margin


def ref_jacobian(kind, param, z, T):
    h = mpmath.mpf("1e-100")
    L = len(z)
    J = [[None] * L for _ in range(L)]
    for k in range(L):
        zp = [mpmath.mpf(v) for v in z]
        zm = list(zp)
        zp[k] += h
        zm[k] -= h
        ap, _ = ref_weights(kind, param, zp, T)
        am, _ = ref_weights(kind, param, zm, T)
        for j in range(L):
            J[j][k] = (ap[j] - am[j]) / (2 * h)
    return J


class Checker:
    def __init__(self):
        self.failures = 0
        self.checks = 0
        self.failed = []

    def fail(self, case, what):
        self.failures += 1
        self.failed.append(what)
        if self.failures <= 40:
            print(f"FAIL {case}: {what}")

    def rel(self, case, what, got, want, tol, floor=1e-290):
        self.checks += 1
        want = float(want) if not isinstance(want, float) else want
        if math.isnan(got) or (math.isinf(got) != math.isinf(want)):
            self.fail(case, f"{what} = {got!r}, want {want!r}")
            return
        if math.isinf(want):
            if got != want:
                self.fail(case, f"{what} = {got!r}, want {want!r}")
            return
        if abs(want) < floor:
            if abs(got - want) > 1e-300:
                self.fail(case, f"{what} = {got!r}, want {want!r} (absolute 1e-300)")
            return
        if abs(got - want) > tol * abs(want):
            self.fail(case, f"{what} = {got!r}, want {want!r} (relative {abs(got - want) / abs(want):.3g} > {tol:.3g})")

    def absolute(self, case, what, got, want, tol):
        self.checks += 1
        if math.isinf(want) or math.isinf(got):
            if got != want:
                self.fail(case, f"{what} = {got!r}, want {want!r}")
            return
        if not abs(got - want) <= tol:
            self.fail(case, f"{what} = {got!r}, want {want!r} (absolute {abs(got - want):.3g} > {tol:.3g})")

    def exact(self, case, what, got, want):
        self.checks += 1
        if got != want:
            self.fail(case, f"{what}: {got!r}, want exactly {want!r}")


def cases():
    """(kind, param, T, z, with_jacobian) rows: hand-made, then random."""
    kinds = [("softmax1", "-"), ("sigmoid", "-"), ("sigmoid", "0.7"), ("softpick", "-"),
             ("relu", "-"), ("stickbreaking", "-"), ("entmax", "-"), ("entmax", "2"),
             ("entmax", "1.25"), ("entmax", "3"), ("softmax", "-"), ("ssmax", "0.7"),
             ("sparsemax", "-"), ("entmax15", "-")]
    out = []
    for kind, param in kinds:
        out.append((kind, param, 1.0, [0.3], True))                    # L = 1
        out.append((kind, param, 0.5, [1.0, 1.0, 0.5, 1.0, -2.0], kind not in ("sparsemax", "entmax")))  # ties
        out.append((kind, param, 1e6, [1.5, -2.0, 0.25, 3.0], True))   # huge T
        out.append((kind, param, 1e-6, [1.5e-3, -2e-3, 0.25e-3, 1e-3], False))  # tiny T
        out.append((kind, param, 1e-3, [-1.0, -2.0, -1.5], False))     # weights underflow
    out.append(("softpick", "-", 1.0, [-1.0, -0.5, 0.0, -2.0], False))   # every z <= 0: m = 0
    out.append(("softpick", "-", 0.3, [-1.0, -0.5, -3.0], True))         # every z < 0: m = 0
    out.append(("softpick", "-", 1.0, [0.0, 0.0, 0.0], False))           # denominator 0: m = 0
    out.append(("relu", "-", 2.0, [-1.0, -0.5, -3.0], True))             # every z < 0: m = 0
    out.append(("stickbreaking", "-", 1.0, [40.0, 45.0, 50.0, 60.0], True))  # every beta rounds to 1
    out.append(("stickbreaking", "-", 0.01, [1.0, 2.0, 0.5, 3.0], False))   # the same at small T
    out.append(("stickbreaking", "-", 1.0, [-40.0, -45.0, -50.0], True))    # every beta tiny
    out.append(("softmax1", "-", 1.0, [800.0, 799.0, -5.0], True))        # no overflow
    out.append(("sigmoid", "-", 1.0, [800.0, -800.0, 0.0], True))
    rng = np.random.default_rng(36)
    for kind, param in kinds:
        for L in (2, 5, 16):
            for T in (1e-3, 0.1, 1.0, 10.0, 1e3):
                z = [float(v) for v in rng.uniform(-3, 3, L)]
                jac = L <= 5 or (T in (0.1, 1.0) and not kind.startswith(("entmax", "sparse")))
                out.append((kind, param, T, z, jac))
        out.append((kind, param, 1.0, [float(v) for v in rng.uniform(-3, 3, 64)], False))
    return out


def main():
    driver = sys.argv[1]
    rows = cases()
    rng = np.random.default_rng(7)
    gs = [[float(v) for v in rng.uniform(-1, 1, len(r[3]))] for r in rows]
    text = "".join(f"{k} {p} {T!r} {len(z)} {' '.join(repr(v) for v in z)} {' '.join(repr(v) for v in g)}\n"
                   for (k, p, T, z, _), g in zip(rows, gs))
    res = subprocess.run([driver], input=text, capture_output=True, text=True)
    if res.returncode != 0:
        print(f"FAIL: {driver} exited {res.returncode}: {res.stderr}")
        return 1
    lines = res.stdout.splitlines()
    if len(lines) != len(rows):
        print(f"FAIL: {len(lines)} answers for {len(rows)} rows")
        return 1
    if "--negative" in sys.argv[2:]:
        lines = spoil(rows, lines)
    c = Checker()
    n_empty = n_jac = 0
    for (kind, param, T, z, want_jac), g, line in zip(rows, gs, lines):
        L = len(z)
        case = f"{kind}({param}) T={T!r} z={z if L <= 5 else f'<{L} keys>'}"
        if line.startswith("error"):
            c.fail(case, line)
            continue
        v = [float(t) for t in line.split()]
        m, log_m, jn = v[0], v[1], v[2]
        a, p, lp, vjp = v[3:3 + L], v[3 + L:3 + 2 * L], v[3 + 2 * L:3 + 3 * L], v[3 + 3 * L:]
        ra, margin = ref_weights(kind, param, z, T)
        kappa = 1 + max(abs(x / T) for x in z)
        tol = 32 * EPS * L * kappa
        rm = mpmath.fsum(ra)
        simplex = kind in ("softmax", "ssmax", "sparsemax", "entmax15", "entmax")
        # counts, exactly
        rfl = [float(x) for x in ra]
        supp = [x > 0 for x in a]
        rsupp = [x > 0 for x in rfl]
        for j in range(L):
            if margin is not None and margin[j] < mpmath.mpf("1e-12"):
                continue  # at the threshold: bisection may put it either side
            c.exact(case, f"a[{j}] > 0", supp[j], rsupp[j])
        if margin is None:
            c.exact(case, "support size", sum(supp), sum(rsupp))
        c.exact(case, "m == 0", m == 0.0, (1.0 if simplex else float(rm)) == 0.0)
        c.exact(case, "log m == -inf", log_m == -math.inf, rm == 0)
        if rm == 0:
            n_empty += 1
            c.exact(case, "a of an empty row", a, [0.0] * L)
            c.exact(case, "p of an empty row", p, [0.0] * L)
            c.exact(case, "m of an empty row", m, 0.0)
        for j in range(L if rm != 0 else 0):
            c.rel(case, f"a[{j}]", a[j], ra[j], tol)
            rp = ra[j] / rm
            c.rel(case, f"p[{j}]", p[j], rp, tol)
            c.absolute(case, f"log p[{j}]", lp[j], float(mpmath.log(rp)) if rp > 0 else -math.inf,
                       32 * EPS * (L * kappa + (abs(float(mpmath.log(rp))) if rp > 0 else 0)))
        if simplex:
            c.exact(case, "m on the simplex", (m, log_m), (1.0, 0.0))
        elif rm != 0:
            c.rel(case, "m", m, rm, tol)
            c.absolute(case, "log m", log_m, float(mpmath.log(rm)), 32 * EPS * (L * kappa + abs(float(mpmath.log(rm)))))
        if not want_jac:
            continue
        n_jac += 1
        Jm = ref_jacobian(kind, param, z, T)
        Jmax = max(abs(x) for row in Jm for x in row)
        # scaled by its largest entry first: the SVD of entries of 1e-200 would underflow
        J = np.array([[float(x / Jmax) if Jmax else 0.0 for x in row] for row in Jm])
        norm = float(np.linalg.norm(J, 2)) * float(Jmax)
        jtol = 64 * EPS * L * kappa
        if norm == 0.0:
            c.exact(case, "||J||_2", jn, 0.0)
        else:
            c.rel(case, "||J||_2", jn, norm, jtol)
        want_vjp = [mpmath.fsum(Jm[j][k] * g[j] for j in range(L)) for k in range(L)]
        # The VJP's terms are products of a weight, g and 1/T (c for ssmax): its rounding error
        # is relative to those, not to the (possibly cancelled) result.
        cfac = 1 / T if kind != "ssmax" else float(param) * math.log(L) / T
        scale = L * max(abs(x) for x in g) * (float(Jmax) + cfac * max(abs(x) for x in a))
        for k in range(L):
            c.absolute(case, f"vjp[{k}]", vjp[k], float(want_vjp[k]), jtol * scale + 1e-300)
    print(f"{len(rows)} rows ({n_empty} empty, {n_jac} with their Jacobian), {c.checks} checks, "
          f"{c.failures} failures")
    if "--negative" in sys.argv[2:]:
        caught = {w for w in ("m == 0", "a[0]", "||J||_2") if any(w in f for f in c.failed)}
        print(f"negative control: caught {sorted(caught)} of the 3 spoiled answers")
        return 0 if len(caught) == 3 else 1
    return 1 if c.failures else 0


def spoil(rows, lines):
    out = list(lines)
    done = set()
    for i, (kind, param, T, z, jac) in enumerate(rows):
        tok = out[i].split()
        if kind == "softpick" and max(z) < 0 and "m" not in done:
            tok[0] = "1e-300"
            done.add("m")
        elif kind == "softmax1" and len(z) == 5 and "a" not in done:
            tok[3] = repr(float(tok[3]) * (1 + 1e-9))
            done.add("a")
        elif kind == "stickbreaking" and jac and len(z) == 5 and "J" not in done:
            tok[2] = repr(float(tok[2]) * (1 + 1e-9))
            done.add("J")
        out[i] = " ".join(tok)
    return out


if __name__ == "__main__":
    sys.exit(main())
