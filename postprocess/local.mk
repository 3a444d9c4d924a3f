# postprocess: the report of a sweep's NetCDF (Python 3 with Debian's numpy, scipy, netCDF4 and
# matplotlib: run with $(PYTHON_DEBIAN)). postprocess/report is a thin entry point; the package
# postprocess/normsweep_report is installed in $(pkgdatadir)/postprocess, where the installed
# entry point (normsweep-report, Makefile.am's install-exec-local) finds it.
NS_REPORT_PY = postprocess/normsweep_report/__init__.py postprocess/normsweep_report/rng.py \
	postprocess/normsweep_report/load.py postprocess/normsweep_report/ks.py \
	postprocess/normsweep_report/bootstrap.py postprocess/normsweep_report/stats.py \
	postprocess/normsweep_report/intervals_nc.py postprocess/normsweep_report/rules.py \
	postprocess/normsweep_report/claims.py postprocess/normsweep_report/figures.py \
	postprocess/normsweep_report/page.py postprocess/normsweep_report/build.py \
	postprocess/normsweep_report/training.py postprocess/normsweep_report/cli.py \
	postprocess/normsweep_report/files.py postprocess/normsweep_report/compare.py \
	postprocess/normsweep_report/sinks.py postprocess/normsweep_report/training_sinks.py
dist_noinst_SCRIPTS += postprocess/report
nobase_dist_pkgdata_DATA += $(NS_REPORT_PY)
EXTRA_DIST += tests/postprocess_report.sh tests/check_report.py tests/report_stats.sh \
	tests/report_fixture.py tests/check_rng.py tests/check_bootstrap.py tests/check_rules.py \
	tests/check_file_intervals.py tests/check_training_seeds.py tests/check_training_sinks.py \
	tests/summary_report.sh \
	tests/check_summary_report.py tests/report_files.sh tests/check_report_files.py \
	tests/report_sinks.sh
TESTS += tests/postprocess_report.sh tests/report_stats.sh tests/summary_report.sh \
	tests/report_files.sh tests/report_sinks.sh

# rng_vectors: the C generator's values, which the report's Python generator must reproduce
check_PROGRAMS += tests/rng_vectors
tests_rng_vectors_SOURCES = tests/rng_vectors.c
tests_rng_vectors_CPPFLAGS = $(AM_CPPFLAGS)
tests_rng_vectors_LDADD = src/analysis/libns_analysis.a -lm
