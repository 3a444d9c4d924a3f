/* test_campaign: campaign files read into one sweep text per model (spec/ns_campaign): every other
 * key keeps its line and column, each model's model/tokenizer/output/checkpoint_dir read back by
 * the sweep parser exactly (quotes, backslashes, '#' and ': ' in names), ids, the campaign's own
 * mistakes at their positions, a file without models: is not a campaign, and the shipped campaign
 * files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "ns_test.h"
#include "spec/ns_campaign.h"
#include "spec/ns_sweep_yaml.h"

static char sweeps_dir[4096];

static int camp(const char *text, const char *out, ns_campaign *c, ns_sweep_diags *d)
{
    ns_err err;
    memset(d, 0, sizeof *d);
    return ns_campaign_parse(text, strlen(text), "c.yaml", out, c, d, &err);
}

/* model i's text through the sweep parser: no problem, and its settings */
static void parse_model(const ns_campaign *c, size_t i, ns_sweep_config *cfg, ns_sweep_marks *mk)
{
    ns_sweep_diags d = {0};
    ns_err err;
    CU_ASSERT_EQUAL(ns_sweep_parse(c->models[i].text, c->models[i].len, "c.yaml", cfg, mk, &d,
                                   &err), NS_OK);
    for (size_t k = 0; k < d.n; k++)
        fprintf(stderr, "  %s\n", d.items[k].text);
    CU_ASSERT_EQUAL(d.n, 0);
    ns_sweep_diags_free(&d);
}

static void test_texts_keep_lines(void)
{
    const char *text =
        "# a campaign\n"                                          /* 1 */
        "models:\n"                                               /* 2 */
        "  - m/one\n"                                             /* 3 */
        "  - {name: \"q\\\"uote\\\\d: #x\", tokenizer: tk, id: q}\n" /* 4 */
        "  # a comment in the list\n"                             /* 5 */
        "  - name: p@step1000\n"                                  /* 6 */
        "tokenizer: tok-default   # the default\n"               /* 7 */
        "corpus: c.txt\n"                                         /* 8 */
        "shards: {count: 3, L_max: 64}\n"                         /* 9 */
        "output_dir: o\n"                                         /* 10 */
        "grid:\n"                                                 /* 11 */
        "  L: [16, 64]\n"                                         /* 12 */
        "  N: [1, 4]\n";                                          /* 13 */
    ns_campaign c;
    ns_sweep_diags d;
    CU_ASSERT_EQUAL_FATAL(camp(text, NULL, &c, &d), NS_OK);
    CU_ASSERT_EQUAL(d.n, 0);
    CU_ASSERT_EQUAL_FATAL(c.n, 3);
    CU_ASSERT_STRING_EQUAL(c.output_dir, "o");
    const char *models[3] = {"m/one", "q\"uote\\d: #x", "p@step1000"};
    const char *toks[3] = {"tok-default", "tk", "tok-default"};
    const char *ids[3] = {"one", "q", "p_step1000"};
    const size_t lines[3] = {3, 4, 6};
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_STRING_EQUAL(c.models[i].id, ids[i]);
        CU_ASSERT_STRING_EQUAL(c.models[i].model, models[i]);
        CU_ASSERT_EQUAL(c.models[i].mark.line, lines[i]);
        CU_ASSERT_EQUAL(c.models[i].mark.col, 5);
        ns_sweep_config cfg;
        ns_sweep_marks mk;
        parse_model(&c, i, &cfg, &mk);
        CU_ASSERT_STRING_EQUAL(cfg.model, models[i]);
        CU_ASSERT_STRING_EQUAL(cfg.tokenizer, toks[i]);
        char want[256];
        snprintf(want, sizeof want, "o/%s/%s.nc", ids[i], ids[i]);
        CU_ASSERT_STRING_EQUAL(cfg.output, want);
        CU_ASSERT_STRING_EQUAL(c.models[i].output, want);
        snprintf(want, sizeof want, "o/%s/checkpoint", ids[i]);
        CU_ASSERT_STRING_EQUAL(cfg.checkpoint_dir, want);
        snprintf(want, sizeof want, "o/%s/%s.yaml", ids[i], ids[i]);
        CU_ASSERT_STRING_EQUAL(c.models[i].sweep_path, want);
        /* the shared settings where the campaign has them (marks are the values') */
        CU_ASSERT_EQUAL(mk.corpus.line, 8);
        CU_ASSERT_EQUAL(mk.corpus.col, 9);
        CU_ASSERT_EQUAL(mk.shards.line, 9);
        CU_ASSERT_EQUAL(mk.grid.line, 12);
        CU_ASSERT_EQUAL(mk.N_key.line, 13);
        CU_ASSERT_EQUAL(mk.N_key.col, 6);
        /* the appended keys after the campaign's last line */
        CU_ASSERT(mk.model.line > c.text_lines);
        CU_ASSERT_EQUAL(cfg.nL, 2);
        ns_sweep_config_free(&cfg);
        ns_sweep_marks_free(&mk);
    }
    ns_campaign_free(&c);
    ns_sweep_diags_free(&d);

    /* tokenizer: model (the default without a campaign tokenizer:) names the model's own files;
     * --output overrides output_dir */
    CU_ASSERT_EQUAL_FATAL(camp("models: [a, {name: b, tokenizer: t}]\nshards: {count: 1, "
                               "L_max: 8}\ngrid: {L: 8, N: 1}\n", "over", &c, &d), NS_OK);
    CU_ASSERT_EQUAL_FATAL(c.n, 2);
    ns_sweep_config cfg;
    parse_model(&c, 0, &cfg, NULL);
    CU_ASSERT_STRING_EQUAL(cfg.tokenizer, "a");
    CU_ASSERT_STRING_EQUAL(cfg.output, "over/a/a.nc");
    ns_sweep_config_free(&cfg);
    parse_model(&c, 1, &cfg, NULL);
    CU_ASSERT_STRING_EQUAL(cfg.tokenizer, "t");
    ns_sweep_config_free(&cfg);
    ns_campaign_free(&c);
    ns_sweep_diags_free(&d);
}

static void test_not_a_campaign(void)
{
    ns_campaign c;
    ns_sweep_diags d;
    const char *texts[] = {"model: gpt2\nshards: {count: 1, L_max: 8}\n", "", "[1, 2]\n",
                           "models: [a\n" /* a syntax error: the sweep parser reports it */};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        CU_ASSERT_EQUAL(camp(texts[i], NULL, &c, &d), NS_OK);
        CU_ASSERT_EQUAL(c.n, 0);
        CU_ASSERT_EQUAL(d.n, 0);
        ns_campaign_free(&c);
        ns_sweep_diags_free(&d);
    }
}

static void one_problem(const char *text, const char *expected)
{
    ns_campaign c;
    ns_sweep_diags d;
    CU_ASSERT_EQUAL(camp(text, NULL, &c, &d), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(d.n, 1);
    if (d.n != 1 || strcmp(d.items[0].text, expected) != 0) {
        for (size_t k = 0; k < d.n; k++)
            fprintf(stderr, "  got: %s\n", d.items[k].text);
        fprintf(stderr, "  expected: %s\n", expected);
        CU_FAIL("not the expected problem");
    }
    ns_campaign_free(&c);
    ns_sweep_diags_free(&d);
}

static void test_problems(void)
{
    one_problem("models: [x/a, y/A]\n",
                "c.yaml:1:15: models: 'y/A' gives the output name 'A', as 'x/a' (line 1) does up "
                "to letter case; give one of them another id:");
    one_problem("models:\n  - {name: m, id: .hidden}\n",
                "c.yaml:2:5: models.id: '.hidden' is not a safe name: 1..64 of A-Z a-z 0-9 . _ + "
                "-, not starting with '.'");
    one_problem("models: [m]\nmodel: gpt2\n",
                "c.yaml:2:1: model: a campaign names its models in models:, not in model: beside "
                "it");
    one_problem("models: [m]\ncheckpoint_dir: ck\n",
                "c.yaml:2:1: checkpoint_dir: a campaign writes each model's output to "
                "OUTPUT_DIR/<id>/<id>.nc and its journal to OUTPUT_DIR/<id>/checkpoint; set "
                "output_dir: instead");
    one_problem("models: {a: 1}\n", "c.yaml:1:9: models: expected a list of models");
    one_problem("models: [[a]]\n", "c.yaml:1:10: models: each entry is a model name or {name: "
                "..., tokenizer: ..., id: ...}, got a list");
    one_problem("models: [{tokenizer: t}]\n", "c.yaml:1:10: models: a model entry needs name: (an "
                "asset name such as pythia-160m or pythia-160m@step1000, or a model directory)");
    one_problem("models: [{name: a, revision: 3}]\n",
                "c.yaml:1:20: models: unknown key 'revision' in a model entry (name, tokenizer, "
                "id)");
    one_problem("models: [null]\n", "c.yaml:1:10: models: expected a non-empty string");
    one_problem("{models: [a], shards: {count: 1}}\n", "c.yaml:1:1: a campaign file's top level "
                "must be a block mapping (one key per line), not { ... }");
    one_problem("models: [a]\nmodels: [b]\n", "c.yaml:2:1: duplicate key 'models'");
}

static void test_ids(void)
{
    const char *in[] = {"pythia-160m@step1000", "/data/models/qwen/", "dir/.hidden", "a b/c:d",
                        "Qwen2.5-0.5B"};
    const char *out[] = {"pythia-160m_step1000", "qwen", "_hidden", "c_d", "Qwen2.5-0.5B"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        char *id = ns_campaign_id_of(in[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(id);
        CU_ASSERT_STRING_EQUAL(id, out[i]);
        free(id);
    }
}

/* the shipped campaign files: every model's text parses without a problem, in file order */
static void test_shipped(void)
{
    const char *files[] = {"models.yaml", "pythia-training.yaml"};
    const char *first[] = {"gpt2", "pythia-160m_step0"};
    const size_t n[] = {4, 6};
    for (size_t f = 0; f < 2; f++) {
        char path[8192], *text = NULL;
        size_t len = 0;
        ns_err err;
        snprintf(path, sizeof path, "%s/%s", sweeps_dir, files[f]);
        CU_ASSERT_EQUAL_FATAL(ns_file_read_all(path, 0, &text, &len, &err), NS_OK);
        ns_campaign c;
        ns_sweep_diags d = {0};
        CU_ASSERT_EQUAL(ns_campaign_parse(text, len, files[f], NULL, &c, &d, &err), NS_OK);
        CU_ASSERT_EQUAL_FATAL(c.n, n[f]);
        CU_ASSERT_STRING_EQUAL(c.models[0].id, first[f]);
        for (size_t i = 0; i < c.n; i++) {
            ns_sweep_config cfg;
            parse_model(&c, i, &cfg, NULL);
            CU_ASSERT_STRING_EQUAL(cfg.tokenizer, c.models[i].model); /* tokenizer: model */
            ns_sweep_config_free(&cfg);
        }
        ns_campaign_free(&c);
        ns_sweep_diags_free(&d);
        free(text);
    }
}

int main(void)
{
    snprintf(sweeps_dir, sizeof sweeps_dir, "%s/../../sweeps", ns_test_env("NS_TEST_DATA_DIR"));
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("campaign", NULL, NULL);
    CU_add_test(s, "texts keep every line", test_texts_keep_lines);
    CU_add_test(s, "not a campaign", test_not_a_campaign);
    CU_add_test(s, "the campaign's own problems", test_problems);
    CU_add_test(s, "ids", test_ids);
    CU_add_test(s, "shipped campaign files", test_shipped);
    return ns_test_run_all();
}
