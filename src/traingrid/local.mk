# traingrid: `normsweep train-grid` as library functions -- the training grid file (ns_train_grid:
# the train options every cell shares, normalizer x temperature [x seed], the sweep, the output
# directory) and its run (ns_train_grid_run: every check before any work, then on every rank each
# cell's training and the sweep of the model it trained). docs/TRAIN.md, "Training grids".
noinst_LIBRARIES += src/traingrid/libns_traingrid.a
src_traingrid_libns_traingrid_a_SOURCES = \
	src/traingrid/ns_train_grid.c src/traingrid/ns_train_grid.h \
	src/traingrid/ns_train_grid_run.c src/traingrid/ns_train_grid_run.h
src_traingrid_libns_traingrid_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
