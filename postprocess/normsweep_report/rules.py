"""rules: the decision rules that turn an estimate and its 95 % interval into one of three
answers (docs/STATISTICS.md, "Three answers"). Pure functions of numbers; each returns
(verdict, reason).

A claim is contradicted only when the whole interval lies on the wrong side of the claim's
threshold, supported only when it lies on the right side (or inside the claim's equivalence
band), inconclusive otherwise -- and always inconclusive without an interval."""
import math

SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"
VERDICTS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE)
NO_INTERVAL = "no interval: the file has neither samples nor intervals"


def _interval(lo, hi):
    """True when (lo, hi) is an interval (infinite endpoints allowed, NaN or None not)."""
    return lo is not None and hi is not None and not (math.isnan(lo) or math.isnan(hi))


def below(lo, hi, threshold):
    """Claim X < threshold. Supported iff hi < threshold; contradicted iff lo >= threshold (the
    threshold itself is on the wrong side of a strict claim); else inconclusive."""
    if not _interval(lo, hi):
        return INCONCLUSIVE, NO_INTERVAL
    if hi < threshold:
        return SUPPORTED, "the whole interval lies below %s" % _f(threshold)
    if lo >= threshold:
        return CONTRADICTED, "the whole interval lies at or above %s" % _f(threshold)
    return INCONCLUSIVE, "the interval straddles %s" % _f(threshold)


def at_most(lo, hi, threshold):
    """Claim X <= threshold. Supported iff hi <= threshold; contradicted iff lo > threshold."""
    if not _interval(lo, hi):
        return INCONCLUSIVE, NO_INTERVAL
    if hi <= threshold:
        return SUPPORTED, "the whole interval lies at or below %s" % _f(threshold)
    if lo > threshold:
        return CONTRADICTED, "the whole interval lies above %s" % _f(threshold)
    return INCONCLUSIVE, "the interval straddles %s" % _f(threshold)


def at_least(lo, hi, threshold):
    """Claim X >= threshold. Supported iff lo >= threshold; contradicted iff hi < threshold."""
    if not _interval(lo, hi):
        return INCONCLUSIVE, NO_INTERVAL
    if lo >= threshold:
        return SUPPORTED, "the whole interval lies at or above %s" % _f(threshold)
    if hi < threshold:
        return CONTRADICTED, "the whole interval lies below %s" % _f(threshold)
    return INCONCLUSIVE, "the interval straddles %s" % _f(threshold)


def within(lo, hi, a, b):
    """Claim a <= X <= b (an equivalence band). Supported iff the interval lies inside [a, b];
    contradicted iff it lies entirely outside (hi < a or lo > b); else inconclusive."""
    if not _interval(lo, hi):
        return INCONCLUSIVE, NO_INTERVAL
    if a <= lo and hi <= b:
        return SUPPORTED, "the whole interval lies inside [%s, %s]" % (_f(a), _f(b))
    if hi < a or lo > b:
        return CONTRADICTED, "the whole interval lies outside [%s, %s]" % (_f(a), _f(b))
    return INCONCLUSIVE, "the interval overlaps the edge of [%s, %s]" % (_f(a), _f(b))


def universal(count, checked):
    """A bound that must hold on every row: one counterexample contradicts it (it is a theorem,
    not a tendency); none in at least one check supports it; no check is inconclusive."""
    if checked is None or checked <= 0:
        return INCONCLUSIVE, "no row was checked"
    if count > 0:
        return CONTRADICTED, "%d of %d checks violate it" % (count, checked)
    return SUPPORTED, "no violation in %d checks" % checked


def combine(verdicts):
    """The answer of a claim judged on several parts that must all hold (every L, every N):
    contradicted when any part is, supported when every part is, else inconclusive."""
    vs = list(verdicts)
    if not vs:
        return INCONCLUSIVE
    if CONTRADICTED in vs:
        return CONTRADICTED
    if all(v == SUPPORTED for v in vs):
        return SUPPORTED
    return INCONCLUSIVE


def agree(verdicts):
    """The answer of a claim that should hold at each of several parts (each L): the common
    verdict when they all agree, else inconclusive (the answer depends on the part)."""
    vs = list(verdicts)
    if vs and all(v == vs[0] for v in vs):
        return vs[0]
    return INCONCLUSIVE


def _f(x):
    return "%.4g" % x if isinstance(x, float) else str(x)
