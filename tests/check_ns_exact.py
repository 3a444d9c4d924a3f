#!/usr/bin/python3
"""check_ns_exact: N_s of METRICS.md section 6 recomputed at 50 significant digits (mpmath) from a
`normsweep dump --logits --N ... --T ...` file, and compared exactly with its ns_frac.

Usage: check_ns_exact.py OUT.nc [--full] [--widen W] [--only LAYER:HEAD ...]
Exit 0 when every (layer, head, T, N) cell agrees exactly, 1 otherwise, 77 when mpmath is
missing. Prints the number of cells checked, and in how many of them the naive float64
comparison ||alpha_i x_i - s|| <= r would have decided differently (the cancellation that
METRICS.md section 6 forbids).

Inputs: the file's float32 `logit` (row L - 1) and `value` variables, i.e. exactly the numbers the
C analysis started from; softmax or ssmax (normalizer and normalizer_s attributes), sphere or raw
vectors (the sphere attribute).

The evaluation, independent of the C code:
- x_i . x_j exactly: every float32 is an integer times 2^e, so with one exponent per head the
  value vectors are integer vectors and their Gram matrix is computed in Python integers (no
  rounding). With sphere, x_i . x_j = G_ij / (n_i n_j), n_i = sqrt(G_ii) at 50 digits, and
  ||x_i||^2 = 1 exactly; without, x_i = v_i.
- alpha = softmax(c z) with c = 1/T (ssmax: s log(L) / T) at 50 digits from the exact logits;
  mpmath's exponent range is unbounded, so no weight underflows.
- I_N = the N largest alpha, ties by the smaller index (the order of c z, then the index).
- e_i = ||alpha_i x_i - s||^2 - ||s||^2 = alpha_i (alpha_i ||x_i||^2 - 2 x_i . s) with
  x_i . s = sum_{j in I_N} alpha_j x_i . x_j; i in I_N counts iff e_i <= min over j outside I_N
  of e_j. ns_frac must equal N_s / N as a double (both sides divide two integers with one
  correctly rounded division).
- Only the comparisons need 50 digits (mpmath is slow: a 50-digit e_i costs N operations).
  With --full every e_i is evaluated at 50 digits. Otherwise a float64 filter evaluates every
  e_i vectorized as a sign and a log-magnitude with a certified error interval (filter_keys:
  the float64 errors bounded, then taken 8 times over); a comparison is decided in float64 only
  when the intervals do not overlap (ties and near-ties never are), and the complement's minimum
  whenever several candidates overlap, and every e_i close to it, are evaluated at 50 digits.
  tests/ns_frac_exact.sh runs one window with --full, and one with --widen W (every interval
  W wider in log space, so that many comparisons go to 50 digits through the mixed path).
"""
import math
import sys

import numpy as np

try:
    import mpmath
except ImportError:
    print("check_ns_exact: python3-mpmath is not installed: skipped")
    sys.exit(77)
import netCDF4

mpmath.mp.dps = 50


def read(ds, name):
    v = ds.variables[name]
    v.set_auto_mask(False)
    return np.array(v[:])


def exact_ints(v):
    """float32 matrix -> (Python-int matrix M, exponent E) with v = M * 2^E exactly."""
    v64 = v.astype(np.float64)
    mant, expo = np.frexp(v64)  # v = mant * 2^expo, |mant| in [0.5, 1)
    nz = v64 != 0
    E = int(expo[nz].min()) - 24 if nz.any() else 0
    M = np.empty(v.shape, dtype=object)
    for idx in np.ndindex(v.shape):
        if not nz[idx]:
            M[idx] = 0
        else:
            m = int(mant[idx] * (1 << 24))  # exact: float32 has a 24-bit significand
            M[idx] = m << int(expo[idx] - 24 - E)
    return M, E


K_SLOG = 1.0e6  # offset of the signed-log key (every |log e| here is far below it)
U = 2.0 ** -53


def slog_key(e):
    """A float increasing with the (50-digit) number e: sign(e) (K + log|e|), 0 for e = 0."""
    if e == 0:
        return 0.0
    k = K_SLOG + float(mpmath.log(abs(e)))
    return k if e > 0 else -k


class Head:
    """One head's exact data: integer value vectors, their norms at 50 digits, exact Gram rows
    on demand, and the float64 copies the filter uses."""

    def __init__(self, z, v, sphere):
        self.L, self.d = v.shape
        self.M, self.E = exact_ints(v)
        self.sphere = sphere
        Gd = (self.M * self.M).sum(axis=1)  # exact ||v_i||^2 / 2^(2E)
        if sphere:
            self.nrm = [mpmath.sqrt(mpmath.mpf(int(x))) if x else mpmath.mpf(1) for x in Gd]
            self.g = [mpmath.mpf(1) if x else mpmath.mpf(0) for x in Gd]
            self.scale = None
        else:
            self.scale = mpmath.ldexp(1, 2 * self.E)
            self.nrm = [mpmath.mpf(1)] * self.L
            self.g = [mpmath.mpf(int(x)) * self.scale for x in Gd]
        self.rows = {}
        self.z = [mpmath.mpf(float(x)) for x in z]  # exact binary values
        self.order = sorted(range(self.L), key=lambda i: (-float(z[i]), i))
        x = v.astype(np.float64)
        if sphere:
            n = np.sqrt((x * x).sum(axis=1))
            x = np.where(n[:, None] > 0, x / np.where(n > 0, n, 1)[:, None], x)
        self.x64 = x
        self.G64 = x @ x.T
        self.g64 = np.array([float(t) for t in self.g])

    def grow(self, i):
        """Exact row i of the integer Gram matrix."""
        if i not in self.rows:
            self.rows[i] = self.M.dot(self.M[i])
        return self.rows[i]

    def exact_e(self, a, i, I):
        """e_i = alpha_i (alpha_i ||x_i||^2 - 2 x_i . s) at 50 digits, s over the keys I."""
        Gi = self.grow(i)
        if self.sphere:
            sx = mpmath.fsum(a[j] / self.nrm[j] * int(Gi[j]) for j in I) / self.nrm[i]
        else:
            sx = mpmath.fsum(a[j] * int(Gi[j]) for j in I) * self.scale
        return a[i] * (a[i] * self.g[i] - 2 * sx)


def exact_weights(h, c):
    cz = [c * x for x in h.z]
    mx = max(cz)
    w = [mpmath.exp(x - mx) for x in cz]
    tot = mpmath.fsum(w)
    return [x / tot for x in w]


WIDEN = 0.0  # --widen W: add W to every interval (forces 50-digit decisions; a test of the logic)


def filter_keys(h, c64, la64, a64, I, mask):
    """float64 e_i with a certified interval of their signed-log keys (lo, hi). Error bound of
    q_i = alpha_i g_i - 2 x_i . s evaluated from float64 x, alpha and Gram values: the products
    and sums of N + d + 8 terms, relative errors of alpha (delta_la) and of x, each at most
    (N + d + 8) u of the sum of the terms' magnitudes; taken 8 times over. The log-weight's
    error delta_la is 64 u (max |c z| + 2)."""
    L, d, N = h.L, h.d, len(I)
    G_I = h.G64[:, I]
    sx = G_I @ a64[I]
    asx = np.abs(G_I) @ a64[I]
    q = a64 * h.g64 - 2.0 * sx
    dla = 64.0 * U * (float(np.abs(c64 * h_zf(h)).max()) + 2.0)
    errq = (8.0 * (N + d + 8) * U + 4.0 * dla) * (a64 * np.abs(h.g64) + 2.0 * asx) + 1e-300
    aq = np.abs(q)
    sure = aq > 2.0 * errq
    with np.errstate(divide="ignore"):
        logmag = la64 + np.log(np.where(sure, aq, aq + errq))
    rel = np.where(sure, errq / np.where(sure, aq - errq, 1.0), 0.0)
    delta = dla + rel + 1e-9 + WIDEN  # 1e-9: the float resolution of keys near K_SLOG
    key = np.sign(q) * (K_SLOG + logmag)
    lo = np.where(sure, key - delta, -(K_SLOG + logmag) - delta)
    hi = np.where(sure, key + delta, (K_SLOG + logmag) + delta)
    return lo, hi, sure


def h_zf(h):
    if not hasattr(h, "_zf"):
        h._zf = np.array([float(x) for x in h.z])
    return h._zf


def head_cells(z, v, Ts, Ns, c_of_T, sphere, full):
    """Exact N_s for every (T, N) of one head: dict (t, n) -> N_s (None where N >= L); the naive
    float64 decisions; and how many comparisons were decided at 50 digits.

    full: every e_i at 50 digits. Otherwise a float64 filter decides the comparisons whose
    certified intervals (filter_keys) do not overlap, and every other one -- the complement's
    minimum among overlapping candidates, each e_i too close to it -- is evaluated at 50 digits."""
    h = Head(z, v, sphere)
    L = h.L
    zf = h_zf(h)
    out, naive = {}, {}
    n_exact = 0
    for t, T in enumerate(Ts):
        c = c_of_T(T, L)
        c64 = float(c)
        cz = c64 * zf
        mx = cz.max()
        la64 = cz - mx - np.log(np.exp(cz - mx).sum())
        a64 = np.exp(la64)
        a = None
        for n, N in enumerate(Ns):
            if N >= L:
                out[(t, n)] = None
                continue
            I = h.order[:N]
            mask = np.zeros(L, dtype=bool)
            mask[I] = True
            comp = [j for j in range(L) if not mask[j]]
            if full:
                a = a or exact_weights(h, c)
                e = {i: h.exact_e(a, i, I) for i in range(L)}
                n_exact += L
                emin = min(e[j] for j in comp)
                out[(t, n)] = sum(1 for i in I if e[i] <= emin)
            else:
                lo, hi, sure = filter_keys(h, c64, la64, a64, I, mask)
                min_hi = hi[~mask].min()
                cands = [j for j in comp if lo[j] <= min_hi]
                emin = None
                if len(cands) == 1 and sure[cands[0]]:
                    em_lo, em_hi = lo[cands[0]], hi[cands[0]]
                else:
                    a = a or exact_weights(h, c)
                    emin = min(h.exact_e(a, j, I) for j in cands)
                    n_exact += len(cands)
                    k = slog_key(emin)
                    em_lo, em_hi = k - 1e-9, k + 1e-9
                ns = 0
                for i in I:
                    if hi[i] <= em_lo and sure[i]:
                        ns += 1
                    elif lo[i] > em_hi and sure[i]:
                        pass
                    else:
                        a = a or exact_weights(h, c)
                        if emin is None:
                            emin = min(h.exact_e(a, j, I) for j in cands)
                            n_exact += len(cands)
                        ns += h.exact_e(a, i, I) <= emin
                        n_exact += 1
                out[(t, n)] = ns
            # naive: float64 distances and r, as a cancellation-prone evaluation decides
            sel = np.array(I)
            s64 = (a64[sel, None] * h.x64[sel]).sum(axis=0)
            dist = np.sqrt(((a64[:, None] * h.x64 - s64[None, :]) ** 2).sum(axis=1))
            r = dist[~mask].min()
            naive[(t, n)] = int((dist[sel] <= r).sum())
    return out, naive, n_exact


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    path = argv[1]
    rest = argv[2:]
    full = "--full" in rest
    rest = [a for a in rest if a != "--full"]
    if len(rest) >= 2 and rest[0] == "--widen":
        global WIDEN
        WIDEN = float(rest[1])
        rest = rest[2:]
    only = None
    if rest and rest[0] == "--only":
        only = {tuple(int(x) for x in a.split(":")) for a in rest[1:]}
    ds = netCDF4.Dataset(path)
    norm = ds.getncattr("normalizer")
    if norm not in ("softmax", "ssmax"):
        print(f"check_ns_exact: normalizer {norm} is not supported")
        return 1
    s_par = float(ds.getncattr("normalizer_s")) if norm == "ssmax" else None
    sphere = ds.getncattr("sphere") == "true"
    L = int(ds.getncattr("length"))
    if int(ds.getncattr("metrics_row")) != L - 1:
        print("check_ns_exact: metrics_row is not L - 1")
        return 1
    Ns = [int(x) for x in read(ds, "N")]
    Ts = [float(x) for x in read(ds, "T")]
    Z = read(ds, "logit")
    V = read(ds, "value")
    F = read(ds, "ns_frac")  # (T, N, layer, head)
    if "logit" not in ds.variables:
        print("check_ns_exact: the dump has no logit variable (use --logits)")
        return 1

    def c_of_T(T, LL):
        c = 1 / mpmath.mpf(T)
        if s_par is not None:
            c = mpmath.mpf(s_par) * mpmath.log(LL) * c
        return c

    n_layer, H = Z.shape[0], Z.shape[1]
    checked = bad = naive_wrong = skipped = n_exact = 0
    per_T = {T: [0, 0] for T in Ts}
    for l in range(n_layer):
        for h in range(H):
            if only is not None and (l, h) not in only:
                continue
            z = Z[l, h, L - 1, :L]
            v = V[l, h, :L, :]
            exact, naive, k = head_cells(z, v, Ts, Ns, c_of_T, sphere, full)
            n_exact += k
            for (t, n), ns in exact.items():
                got = float(F[t, n, l, h])
                if ns is None:
                    skipped += 1
                    if not math.isnan(got):
                        bad += 1
                        print(f"FAIL layer {l} head {h} T={Ts[t]} N={Ns[n]}: ns_frac {got}, "
                              f"expected NaN (N >= L)")
                    continue
                checked += 1
                want = ns / Ns[n]
                per_T[Ts[t]][0] += 1
                if naive[(t, n)] != ns:
                    naive_wrong += 1
                    per_T[Ts[t]][1] += 1
                if got != want:
                    bad += 1
                    print(f"FAIL layer {l} head {h} T={Ts[t]} N={Ns[n]}: ns_frac {got!r} = "
                          f"{got * Ns[n]:.6g}/{Ns[n]}, exact N_s/N = {ns}/{Ns[n]}")
    detail = ", ".join(f"T={T}: {c} cells, naive wrong in {w}" for T, (c, w) in per_T.items())
    how = "every e_i" if full else "the float64 filter, the rest"
    print(f"check_ns_exact: {path}: {checked} cells exact against mpmath at "
          f"{mpmath.mp.dps} digits ({skipped} skipped cells NaN), {bad} differ; {detail}; "
          f"{n_exact} e_i evaluated at 50 digits ({how})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
