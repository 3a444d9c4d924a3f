#!/usr/bin/python3
"""check_rng: the report's Python generator (postprocess/normsweep_report/rng.py, and the
bootstrap's vectorized draws) against the C generator's own values printed by
tests/rng_vectors, bit for bit.

    rng_vectors | check_rng.py POSTPROCESS_DIR"""
import sys

sys.path.insert(0, sys.argv[1])
from normsweep_report import bootstrap, rng  # noqa: E402

import numpy as np  # noqa: E402

bad, n = [], 0
for line in sys.stdin:
    f = line.split()
    n += 1
    if f[0] == "mix":
        x, want = int(f[1], 16), int(f[2], 16)
        if rng.mix64(x) != want:
            bad.append(line)
    elif f[0] == "key":
        words = [int(x, 16) for x in f[1:f.index("->")]]
        if rng.key(words) != int(f[-1], 16):
            bad.append(line)
    elif f[0] == "u64":
        s = rng.Stream(int(f[1], 16))
        want = [int(x, 16) for x in line.split(":")[1].split()]
        if [s.u64() for _ in want] != want:
            bad.append(line)
    elif f[0] == "below":
        key, m = int(f[1], 16), int(f[2], 16)
        s = rng.Stream(key)
        want = [int(x, 16) for x in line.split(":")[1].split()]
        if [s.below(m) for _ in want] != want:
            bad.append(line)
    elif f[0] == "boot":
        seed, b, S = (int(x.rstrip(":"), 16) for x in f[1:4])
        want = [int(x, 16) for x in line.split(":")[1].split()]
        got = rng.bootstrap_draws(seed, b, S)
        vec = [int(x) for x in bootstrap._draws_vector(seed, b, S)]
        W = bootstrap.multiplicities(seed, S, b + 1)[b]
        if got != want or vec != want or not np.array_equal(W, np.bincount(want, minlength=S)):
            bad.append(line[:120])
    else:
        bad.append("unknown line " + line)
for b in bad:
    print("check_rng: differs from C:", b.rstrip())
print("check_rng: %d lines, %d differ" % (n, len(bad)))
sys.exit(1 if bad or n < 40 else 0)
