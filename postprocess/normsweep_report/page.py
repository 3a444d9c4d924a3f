"""page: report.json and the self-contained report.html of one sweep: the run, the warnings,
the verdict table (every claim with its statistic, estimate and interval, threshold, grid and
sample, sharp and flat heads, fragility), the bound checks, the figures and the decisions
recorded in the file (docs/REPORT.md)."""
import base64
import html
import json
import math
import os

import numpy as np

from . import claims, files, ks, sinks

CSS = """body{font-family:sans-serif;max-width:1250px;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:0.6em 0}td,th{border:1px solid #aaa;padding:3px 6px;
font-size:13px;vertical-align:top}th{background:#eee}.warn{border:2px solid #c00;background:#fee;
padding:0.6em}.note{border:1px solid #b60;background:#fff8ec;padding:0.5em}
.supported{color:#070;font-weight:bold}.contradicted{color:#c00;font-weight:bold}
.inconclusive{color:#b60;font-weight:bold}img{max-width:100%}figure{margin:1em 0}
figcaption{font-size:13px;color:#444;max-width:60em}code{background:#f4f4f4}small{color:#555}"""


def h(x):
    return html.escape(str(x))


def fmt(x, digits=3):
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return ("%%.%dg" % digits) % x


def ci_text(j):
    if j.get("estimate") is None and j.get("ci_low") is None:
        return "n/a"
    if j.get("ci_low") is None or j.get("ci_high") is None:
        return "%s (no interval)" % fmt(j.get("estimate"))
    return "%s [%s, %s]" % (fmt(j.get("estimate")), fmt(j["ci_low"]), fmt(j["ci_high"]))


def table(header, rows, cls=None):
    out = ["<table%s><tr>%s</tr>" % (" class='%s'" % cls if cls else "",
                                    "".join("<th>%s</th>" % h(c) for c in header))]
    for r in rows:
        out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % c for c in r))
    out.append("</table>")
    return "\n".join(out)


def img(out, name, caption):
    with open(os.path.join(out, name + ".png"), "rb") as f:
        b64 = base64.b64encode(f.read()).decode()
    return ('<figure id="%s"><img alt="%s" src="data:image/png;base64,%s"><figcaption>%s'
            '</figcaption></figure>' % (h(name), h(name), b64, caption))


def json_safe(x):
    """JSON has no NaN or infinity: NaN is written as null, +-inf as the strings "inf"/"-inf"."""
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    if isinstance(x, (np.floating, float)):
        x = float(x)
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def verdict_span(v):
    return "<span class='%s'>%s</span>" % (h(v), h(v))


def claims_table(rows):
    out = []
    for c in rows:
        by = c["by_heads"]
        heads = lambda k: "%s<br><small>%s; %s heads</small>" % (
            verdict_span(by[k]["verdict"]), h(ci_text(by[k])), h(by[k]["n_heads"]))
        frag = "yes: " + "; ".join(c["fragile_because"]) if c["fragile"] else "no"
        out.append([
            "%s<br><small>%s</small>" % (h(c["claim"]), h(c["figure"])),
            h(c["statistic"]),
            h(ci_text(c)),
            h(c["threshold"]),
            "%s<br><small>%s</small>" % (verdict_span(c["verdict"]), h(c["reason"])),
            heads("sharp"), heads("flat"),
            "%s<br><small>%s rows per head cell; %s heads</small>" % (
                h(c["grid"]), h(c["n_samples"]), h(c.get("n_heads", "n/a"))),
            h(frag)])
    return table(["claim (figure)", "statistic", "estimate [95 % interval]", "threshold / margin",
                  "verdict", "sharp heads", "flat heads", "grid and sample", "fragile"], out,
                 "verdicts")


def per_L_table(c):
    rows = [["L = %d" % p["L"], verdict_span(p["verdict"]), h(ci_text(p)), h(p["reason"])]
            for p in c.get("per_L", [])]
    return table(["L", "verdict", "estimate [95 % interval]", "why"], rows)


def sinks_section(out, rep):
    """Attention sinks (METRICS.md 8.1) and the verdicts of every normalizer entry side by side."""
    p = ["<h2 id='sinks'>Attention sinks and every normalizer</h2>"]
    s = rep.get("sinks")
    if not s:
        p.append("<p>The file has no <code>sink_mass</code> (written before METRICS 8.1).</p>")
    else:
        p.append("<p>The mean share of each head's mass on the window's first key (sink_mass) at "
                 "L = %d, T = %g, by layer: its mean over the layer's heads, the heads above "
                 "%g (sink heads, Gu et al.'s criterion) and the file's sink_heads_frac.</p>"
                 % (s[0]["L"], s[0]["T"], sinks.SINK_EPS))
        rows = []
        for e in s:
            for b in e["by_layer"]:
                rows.append([h(e["normalizer"]), str(b["layer"]), h(fmt(b["mean_sink_mass"])),
                             "%d of %d" % (b["sink_heads"], b["heads"]),
                             h(fmt(b["sink_heads_frac"]))])
        p.append(table(["normalizer", "layer", "mean sink mass", "sink heads",
                        "sink_heads_frac"], rows))
        if "fig8_sink_mass" in rep.get("figures", []):
            p.append(img(out, "fig8_sink_mass", h(rep["captions"]["fig8_sink_mass"])))
    by = rep.get("claims_by_normalizer") or []
    if by:
        p.append("<p>Every claim's verdict for each entry of the file's normalizer axis (each "
                 "normalizer and, in a sweep with sink_view, its view without the sink), by the "
                 "same rules as the table above: estimate [95 % interval].</p>")
        ids = [c["id"] for c in by[0]["claims"]]
        rows = []
        for k, cid in enumerate(ids):
            row = [h(cid)]
            for e in by:
                c = e["claims"][k]
                row.append("%s<br><small>%s</small>" % (verdict_span(c["verdict"]),
                                                         h(ci_text(c))))
            rows.append(row)
        p.append(table(["claim"] + [e["normalizer"] for e in by], rows, "by-normalizer"))
    return "\n".join(p)


def median_text(x):
    m = x["median_frac"]
    if m is None or (isinstance(m, float) and math.isnan(m)):
        return "n/a"
    if math.isinf(m):
        return "above %.1f %% (the median head: no N up to %s passes)" % (100.0 * x["largest_N_tested"] / x["L"],
                                                       x["largest_N_tested"])
    return "%.1f %%" % (100.0 * m)


def violations_table(viol):
    return table(["check", "count", "of", "rate"], [
        [h(v["what"]), str(v["count"]), str(v["of"]),
         "%.2f %%" % (100.0 * v["count"] / v["of"]) if v["of"] else "n/a"]
        for v in viol.values()])


def write_html(run, out, rep, figs, with_training=False):
    a = run.attr
    u = rep["uncertainty"]
    p = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>normsweep report</title>"
         "<style>%s</style></head><body>" % CSS,
         "<h1>normsweep report: %s</h1>" % h(os.path.basename(run.path))]
    if with_training:
        p.append("<p><a href='training.html'>The training page</a>: the normalizer x temperature "
                 "grid trained with normsweep train-grid.</p>")
    if rep["model"]["caveat"]:
        p.append("<div class='warn' id='caveat'><b>Caveat:</b> %s</div>" % h(rep["model"]["caveat"]))
    for w in rep["warnings"]:
        p.append("<p class='note'><b>Warning:</b> %s</p>" % h(w))
    hl = rep["headline"]
    p.append(table(["", ""], [
        ["model used", h(run.model_name()) + " (requested: %s)" % h(a("model_requested"))],
        ["model SHA-256", "<code>%s</code>" % h(a("model_sha256"))],
        ["corpus", "%s (%s tokens, Gutenberg header stripped: %s)" % (
            h(a("corpus_used")), h(a("corpus_tokens")), h(a("corpus_gutenberg_stripped")))],
        ["shards x L_max, rows", "%s x %s, %s rows per prefix" % (h(a("shard_count")),
                                                               h(a("L_max")), h(a("rows")))],
        ["normalizer", h(rep["normalizer"])],
        ["grid", "L %s; N %s; T %s; eps %s; %d layers x %d heads" % (
            h(list(map(int, run.L))), h(list(map(int, run.N))), h(list(map(float, run.T))),
            h(list(map(float, run.eps))), len(run.layers), len(run.heads))],
        ["attention", "median over heads of each head's mean entropy / log L at L = %d, T = %g: "
         "%s; %d sharp heads (below %g), %d flat" % (
             hl["L"], hl["T"], h(ci_text(hl["entropy_norm"])), hl["sharp_heads"],
             hl["sharp_below"], hl["flat_heads"])],
        ["intervals", h(u["description"])],
        ["normsweep", "%s, METRICS version %s, git %s" % (h(a("normsweep_version")),
                                                       h(a("metrics_version")), h(a("git_commit")))],
        ["run", "%s to %s: <code>%s</code>" % (h(a("start_time")), h(a("end_time")),
                                              h(a("command_line")))],
    ]))
    counts = {v: sum(c["verdict"] == v for c in rep["claims"]) for v in
              ("supported", "contradicted", "inconclusive")}
    p.append("<h2>The paper's claims: verdicts</h2>")
    p.append("<p>%d supported, %d contradicted, %d inconclusive. Each claim is judged at T = %g "
             "(the model's own attention) by the rule in its row (docs/STATISTICS.md, \"Three "
             "answers\"): contradicted only when the whole 95 %% interval lies on the wrong side "
             "of the threshold, supported only when it lies on the right side or inside the "
             "stated band; without an interval a claim is at best inconclusive. The same rule "
             "is applied to the sharp heads (entropy / log L below %g at that L and T) and to "
             "the flat ones. <i>Fragile</i>: another verdict under a documented variant of the "
             "threshold, at an adjacent temperature of the grid, or on one layer's heads alone "
             "(listed).</p>" % (counts["supported"], counts["contradicted"],
                                counts["inconclusive"], rep["T_claims"], hl["sharp_below"]))
    p.append(claims_table(rep["claims"]))
    for c in rep["claims"]:
        if c.get("per_L"):
            p.append("<h3>%s, by L</h3>" % h(c["claim"]))
            p.append(per_L_table(c))
    p.append("<h3>n_crit of the paper's test by L, as the end-of-run summary prints it</h3>")
    p.append("<p>At T = %g: the heads where an N of the grid passes, and the median over heads of "
             "n_crit / L with a head where none passes counted above every N (the rule the "
             "summary and this page share; docs/STATISTICS.md).</p>" % rep["T_claims"])
    p.append(table(["L", "heads", "an N passes", "none passes", "not computable",
                    "median n_crit / L", "rows per cell"],
                   [[str(x["L"]), str(x["heads"]), str(x["found"]), str(x["none_found"]),
                     str(x["not_computable"]), h(median_text(x)), str(x["rows_per_cell"])]
                    for x in hl["n_crit_expected_by_L"]]))
    p.append(sinks_section(out, rep))
    p.append("<h2>Bound checks and violations</h2><p>Counts over every cell, with the rows they "
             "were counted over. Nothing is clipped or hidden.</p>")
    p.append(violations_table(rep["violations"]))
    p.append("<h2>Figures</h2>")
    for name in figs:
        if name.startswith("fig6_") or name == "fig8_sink_mass":
            continue
        p.append(img(out, name, h(rep["captions"][name])))
    p.append("<h2>Layer x head maps, every T</h2>")
    for name in figs:
        if name.startswith("fig6_"):
            p.append(img(out, name, h(rep["captions"][name])))
    p.append("<h2>Decisions recorded in the file</h2>")
    rules_ = [k for k in run.attrs if k.endswith("_rule") or k in
              ("random_selection", "fd_probes", "ks_method", "quantile_method", "precision",
               "vectors", "metrics_contract")]
    p.append(table(["attribute", "value"], [[h(k), h(run.attr(k))] for k in rules_]))
    p.append("</body></html>")
    files.write_text(os.path.join(out, "report.html"), "\n".join(p))


def write_json(out, rep):
    files.write_text(os.path.join(out, "report.json"),
                     json.dumps(json_safe(rep), indent=1, allow_nan=False))


def warnings_of(run, comp):
    """Plain warnings beside the verdicts: samples too small for the KS test, too few shards for
    the bootstrap, no intervals."""
    w = []
    small = [(int(L), int(n)) for L, n in zip(run.L, run["n_samples"])
             if ks.too_small(int(n), int(n), run.ks_alpha)]
    if small:
        w.append("a cell's sample is too small for its KS test at L = %s: %s rows per cell cannot "
                 "reject a KS distance of 0.5 at alpha = %g (the rule: c(alpha) sqrt(2/n) > 0.5, "
                 "c(alpha) = sqrt(-ln(alpha/2)/2); at alpha = 0.01, fewer than 22 rows); n_crit "
                 "there says nothing about the distances" % (
                     ", ".join(str(L) for L, _ in small), ", ".join(str(n) for _, n in small),
                     run.ks_alpha))
    if comp.samples and run.n_shards < MIN_SHARDS:
        w.append("the bootstrap resamples %d shards: percentile intervals from fewer than %d "
                 "shards are too narrow (they under-cover); read them as indicative"
                 % (run.n_shards, MIN_SHARDS))
    if not comp.samples and not any(s.source == "file" for s in comp.stats.values()):
        w.append("no interval: the file has neither samples (keep_samples: true) nor intervals; "
                 "every claim that needs one is at best inconclusive")
    return w


MIN_SHARDS = 20
