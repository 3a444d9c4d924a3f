"""normsweep_report: the report of a normsweep sweep (and the training page of a train-grid):
the paper's figures with their intervals, the verdict of each of the paper's claims
(supported, contradicted, inconclusive) and a self-contained HTML page (docs/REPORT.md,
docs/STATISTICS.md).

Modules, in the order data flows: rng (the project's counter-based generator), load (the
NetCDF file), ks (the KS statistic of reweighted samples), bootstrap (the shard bootstrap),
stats (every statistic with its interval), rules (the three answers), claims (the paper's
claims), figures, page (report.html and report.json), build (one sweep's report), training
(the training page), cli (the command line)."""
