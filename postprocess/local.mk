# postprocess: figures and a report from a sweep's NetCDF (Python 3 with Debian's numpy,
# netCDF4 and matplotlib: run with $(PYTHON_DEBIAN)).
dist_noinst_SCRIPTS += postprocess/report
EXTRA_DIST += tests/postprocess_report.sh tests/check_report.py
TESTS += tests/postprocess_report.sh
