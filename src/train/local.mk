# train: `normsweep train` -- GPT-2 training in C (forward + exact backward for every attention
# normalizer a model may name, AdamW, data-parallel over MPI with a rank-count-independent
# reduction), writing a model directory in the Hugging Face layout, checkpoints and a NetCDF
# training log.
noinst_LIBRARIES += src/train/libns_train.a
src_train_libns_train_a_SOURCES = \
	src/train/ns_train_params.c \
	src/train/ns_train_model.c \
	src/train/ns_train_data.c \
	src/train/ns_train_optim.c \
	src/train/ns_train_reduce.c \
	src/train/ns_train_log.c \
	src/train/ns_train_ckpt.c \
	src/train/ns_train_setup.c \
	src/train/ns_train_run.c \
	src/train/ns_train_output.c
src_train_libns_train_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
noinst_HEADERS += src/train/ns_train.h src/train/ns_train_internal.h src/train/ns_train_params.h \
	src/train/ns_train_model.h src/train/ns_train_model_internal.h src/train/ns_train_model_impl.h \
	src/train/ns_train_data.h src/train/ns_train_optim.h src/train/ns_train_reduce.h \
	src/train/ns_train_log.h src/train/ns_train_ckpt.h

# the backward against finite differences in double, every normalizer; float vs double; the
# written model's inference forward against the trained forward
check_PROGRAMS += tests/test_train_grad
tests_test_train_grad_SOURCES = tests/test_train_grad.c
tests_test_train_grad_CPPFLAGS = $(NS_TEST_CPP)
tests_test_train_grad_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_train_grad

# the command end to end: invalid input, a tiny run read back by dump, -np 1 = -np 2, SIGTERM +
# --resume = uninterrupted; the output directory's lock (held, refused, kept when stopped, gone when done)
TESTS += tests/train_cli.sh tests/train_lock.sh
EXTRA_DIST += tests/train_cli.sh tests/train_lock.sh

# the gradient against PyTorch autograd on the same tiny model and sequence
check_PROGRAMS += tests/train_grad_export
tests_train_grad_export_SOURCES = tests/train_grad_export.c
tests_train_grad_export_CPPFLAGS = $(NS_TEST_CPP)
tests_train_grad_export_LDADD = $(NS_TEST_LIBS)
TESTS += tests/train_torch.sh
EXTRA_DIST += tests/train_torch.sh tests/check_train_torch.py

# issue 36's model normalizers off the simplex (softmax1, sigmoid) end to end: refusals, --b and
# its default recorded, the inference forward recomputed from the dumped logits by the defining
# formulas, sweeps of the trained models
TESTS += tests/train_norms.sh
EXTRA_DIST += tests/train_norms.sh tests/check_train_norms.py

# `normsweep train-grid` end to end on a tiny grid: invalid grids, a cell equal to a hand run,
# the sweeps on the trained models, --resume, verify of a cell's archive, and the report's
# training page recomputed from the training logs
TESTS += tests/train_grid.sh
EXTRA_DIST += tests/train_grid.sh tests/check_training_report.py
