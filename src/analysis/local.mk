# analysis: normalizers and METRICS.md metrics; pure functions (no I/O, MPI or model types).
noinst_LIBRARIES += src/analysis/libns_analysis.a
src_analysis_libns_analysis_a_SOURCES = src/analysis/ns_analysis_placeholder.c \
	src/analysis/ns_analysis.h src/analysis/ns_normalize.h
src_analysis_libns_analysis_a_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
# KS test and reductions add their sources here.
include src/analysis/stats.mk
