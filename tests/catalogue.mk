# catalogue: the bad-input catalogue (tests/catalogue/*.cat: every case's command, exit status and
# exact message, run by tests/catalogue.sh) and fault injection (tests/faults.sh: disk full,
# unwritable output, model replaced mid-run, SIGTERM at seeded random points, each followed by
# --resume; mid-run faults are injected while the run is held, tests/hold.sh) and
# tests/io_safety.sh (one output locked against a second run, SIGTERM to the commands that
# write temporaries, stale temporaries removed at the next start, outputs through a bind mount).
# See docs/RELIABILITY-CATALOGUE.md.
TESTS += tests/catalogue.sh tests/faults.sh tests/io_safety.sh
EXTRA_DIST += tests/catalogue.sh tests/faults.sh tests/io_safety.sh tests/catalogue/README tests/catalogue/base.yaml.in \
	tests/catalogue/model.cat tests/catalogue/tokenizer.cat tests/catalogue/corpus.cat \
	tests/catalogue/sweep.cat tests/catalogue/cli.cat tests/catalogue/archive.cat \
	tests/catalogue/ranges.cat tests/catalogue/outputs.cat tests/catalogue/messages.cat
