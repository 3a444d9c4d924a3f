#!/usr/bin/python3
"""check_summary_report: the end-of-run summary a sweep printed (its stderr) and report.json of
the same file agree on every number they share: the temperature, and per L the heads where an
N of the paper's KS test passes, the number of heads, and the median over heads of n_crit / L
(printed as "%.1f %%", or "above X %" when a head where no N passes is the median); and on the
warning that a cell's sample is too small for its KS test.

    check_summary_report.py SWEEP_LOG REPORT_JSON warning|no-warning"""
import json
import re
import sys


def main(log, rep_path, want_warning):
    text = open(log).read()
    rep = json.load(open(rep_path))
    bad = []
    m = re.search(r"n_crit_expected \(the paper's KS test\) at T = (\S+), (\w+), median over "
                  r"heads \(no N passes: above every N\):(.*?)\[the paper", text)
    if not m:
        print("check_summary_report: no n_crit line in the summary:\n" + text[-2000:])
        return 1
    T, per = float(m.group(1)), m.group(3)
    if abs(T - rep["T_claims"]) > 1e-12 * T:
        bad.append("T: summary %g, report %g" % (T, rep["T_claims"]))
    got = re.findall(r"L=(\d+): (\d+)/(\d+) heads(?: \(median n_crit/L (above )?([\d.]+) %\))?",
                     per)
    want = rep["headline"]["n_crit_expected_by_L"]
    if len(got) != len(want):
        bad.append("summary has %d L, report %d" % (len(got), len(want)))
    for (L, found, heads, above, med), w in zip(got, want):
        if int(L) != w["L"] or int(found) != w["found"] or int(heads) != w["heads"]:
            bad.append("L=%s: summary %s/%s heads, report %d/%d" % (L, found, heads, w["found"],
                                                                    w["heads"]))
        mf = w["median_frac"]
        if mf is None:
            rtext = None
        elif mf == "inf":
            rtext = "above %.1f" % (100.0 * w["largest_N_tested"] / w["L"])
        else:
            rtext = "%.1f" % (100.0 * mf)
        stext = ("above " if above else "") + med if med else None
        if stext != rtext:
            bad.append("L=%s: summary median %r, report %r" % (L, stext, rtext))
    s_warn = "too small for the KS test" in text
    r_warn = any("too small for its KS test" in x for x in rep["warnings"])
    if s_warn != r_warn or s_warn != (want_warning == "warning"):
        bad.append("warning: summary %s, report %s, expected %s" % (s_warn, r_warn, want_warning))
    for b in bad:
        print("check_summary_report:", b)
    print("check_summary_report: %d L compared, %d difference(s)" % (len(got), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
