# model: causal models from Hugging Face directories -- config.json of every architecture
# (GPT-2, the Llama layout, GPT-NeoX), safetensors single or sharded (mmap, validation), the one
# decoder they load into and its forward pass (sgemm plus element-wise kernels, portable and
# AVX2) -- and the random-weight model writer (mkmodel).
noinst_LIBRARIES += src/model/libns_model.a
src_model_libns_model_a_SOURCES = \
	src/model/ns_safetensors.c \
	src/model/ns_checkpoint.c \
	src/model/ns_model_json.c \
	src/model/ns_model_config.c \
	src/model/ns_gpt2_config.c \
	src/model/ns_decoder_config.c \
	src/model/ns_model_load.c \
	src/model/ns_gpt2_load.c \
	src/model/ns_gpt2_view.c \
	src/model/ns_decoder_load.c \
	src/model/ns_mkmodel.c \
	src/model/ns_mkmodel_write.c \
	src/model/ns_mkdecoder.c \
	src/model/ns_model_kernels.c \
	src/model/ns_model_forward.c \
	src/model/ns_model_probe.c \
	src/model/ns_gpt2_attn.c
src_model_libns_model_a_CPPFLAGS = $(AM_CPPFLAGS) $(NS_EXT_CFLAGS)
# No contraction of a * b + c into FMA: the AVX2 kernels (src/model/ns_model_kernels.c) then round
# exactly as the portable ones apart from expf (see docs/FORWARD.md)
src_model_libns_model_a_CFLAGS = $(AM_CFLAGS) -ffp-contract=off
noinst_HEADERS += src/model/ns_model.h src/model/ns_model_limits.h src/model/ns_model_internal.h src/model/ns_checkpoint.h \
	src/model/ns_model_json.h src/model/ns_model_kernels.h \
	src/model/ns_gpt2.h src/model/ns_gpt2_internal.h src/model/ns_safetensors.h \
	src/model/ns_mkmodel.h src/model/ns_mkmodel_internal.h src/model/ns_mkmodel_write_internal.h

check_PROGRAMS += tests/test_safetensors
tests_test_safetensors_SOURCES = tests/test_safetensors.c
tests_test_safetensors_CPPFLAGS = $(NS_TEST_CPP)
tests_test_safetensors_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_safetensors

check_PROGRAMS += tests/test_model_load
tests_test_model_load_SOURCES = tests/test_model_load.c
tests_test_model_load_CPPFLAGS = $(NS_TEST_CPP)
tests_test_model_load_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_model_load

TESTS += tests/mkmodel_cli.sh
EXTRA_DIST += tests/mkmodel_cli.sh

# forward pass: sgemm forward vs a naive double reference, and vs the golden stand-in files
check_PROGRAMS += tests/test_forward
tests_test_forward_SOURCES = tests/test_forward.c
tests_test_forward_CPPFLAGS = $(NS_TEST_CPP)
tests_test_forward_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_forward

# every architecture: causality, kept rows, sharding, the index's checks, rotary and kernels
check_PROGRAMS += tests/test_models
tests_test_models_SOURCES = tests/test_models.c
tests_test_models_CPPFLAGS = $(NS_TEST_CPP)
tests_test_models_LDADD = $(NS_TEST_LIBS)
TESTS += tests/test_models

# dump of every architecture against an independent float64 reference; sweeps on them
TESTS += tests/models_ref.sh tests/models_sweep.sh
EXTRA_DIST += tests/models_ref.sh tests/models_sweep.sh tests/ref_models.py tests/mkmodel_layout.py
