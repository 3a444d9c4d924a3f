"""rng: the project's counter-based generator (src/analysis/ns_rng.c) in Python, bit for bit.

SplitMix64's finalizer over key + counter * golden gamma, the key hashed from a tuple of 64-bit
words. Draw k (k = 1, 2, ...) of the stream keyed by `key` is mix64(key + k * GAMMA) mod 2^64, so
a draw depends only on its key tuple and position, never on who computes it. Python integers are
reduced modulo 2^64 after every operation, as C's uint64_t arithmetic is.
"""

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
KEY_SALT = 0x6E6F726D73776565  # "normswee": the sponge's initial word (ns_rng_key)

# Domain tag of the bootstrap's keys: the ASCII bytes "bootstrp" read as a big-endian word, in the
# style of the C side's tags ("rand_per", "fd_probe"; src/analysis/ns_row.c).
TAG_BOOTSTRAP = 0x626F6F7473747270


def mix64(x):
    """The SplitMix64 finalizer (ns_rng_mix64)."""
    x &= MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def key(words):
    """A 64-bit key hashed from a tuple of 64-bit words, order mattering (ns_rng_key)."""
    words = list(words)
    h = mix64(KEY_SALT + len(words) * GAMMA)
    for i, w in enumerate(words):
        h = mix64(h ^ mix64((w & MASK) + (i + 1) * GAMMA))
    return h


class Stream:
    """One stream of the generator (ns_rng): u64(), below(n), uniform()."""

    def __init__(self, k):
        self.key = k & MASK
        self.ctr = 0

    def u64(self):
        self.ctr += 1
        return mix64(self.key + self.ctr * GAMMA)

    def below(self, n):
        """Uniform integer in [0, n) without modulo bias: draws above the largest multiple of n
        (minus 1) that fits in 64 bits are rejected (ns_rng_below)."""
        if n < 1:
            raise ValueError("below(n) needs n >= 1")
        limit = MASK - (MASK % n + 1) % n
        while True:
            x = self.u64()
            if x <= limit:
                return x % n

    def uniform(self):
        """Uniform double in [0, 1) with 53 random bits (ns_rng_uniform)."""
        return (self.u64() >> 11) * 2.0 ** -53


def bootstrap_draws(seed, resample, n_shards):
    """The shards drawn (with replacement) for bootstrap resample `resample` (0-based): n_shards
    draws below(n_shards) from the stream keyed (TAG_BOOTSTRAP, seed, resample), in draw order."""
    s = Stream(key((TAG_BOOTSTRAP, seed, resample)))
    return [s.below(n_shards) for _ in range(n_shards)]
