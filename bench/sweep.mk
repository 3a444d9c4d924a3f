# bench/sweep: the sweep runner's parallel efficiency (bench/sweep.sh runs normsweep itself; no
# extra benchmark program).
