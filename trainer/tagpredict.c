/*
 * tagpredict — tag a project from a tagtrain checkpoint.
 *
 *   build/bin/tagpredict --title "..." --description "..."
 *   build/bin/tagpredict --checkpoint runs/latest/best.ckpt --title "..." [--json]
 *
 * The checkpoint carries the featurizer (dim + idf) and the model shape, so
 * the text goes through exactly the preprocessing and features the model was
 * trained on. No MPI: prediction is one forward pass.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_util.h"
#include "mwml.h"
#include "features.h"
#include "model.h"
#include "ckpt.h"

typedef struct {
    const char *path, *title, *desc;
    int as_json;
} options;

static const ck_opt table[] = {
    {"--checkpoint", 0, CK_OPT_STR, offsetof(options, path), .arg = "FILE", .help = "a tagtrain checkpoint: "
     "best.ckpt (default %D),\nor a last.ckpt (its latest parameters)"},
    {"--title", 0, CK_OPT_STR, offsetof(options, title), .arg = "TEXT", .help = "project title (required)"},
    {"--description", 0, CK_OPT_STR, offsetof(options, desc), .arg = "TEXT", .help = "project description (default "
     "empty)"},
    {"--json", 0, CK_OPT_FLAG, offsetof(options, as_json), .help = "one JSON object instead of the table"},
    {NULL},
};

static void usage(FILE *f, const options *defaults)
{
    fprintf(f, "usage: tagpredict [--checkpoint FILE] --title TEXT [--description TEXT] [--json]\n"
               "Print the predicted tag and the probability of each of the 4 tags.\n");
    ck_opt_help(f, table, defaults);
}

int main(int argc, char **argv)
{
    const options defaults = {.path = "runs/latest/best.ckpt", .desc = ""};
    options o = defaults;
    char err[1024];
    const int prc = ck_opt_parse(table, argc, argv, &o, NULL, err, sizeof err);
    if (prc == CK_OPT_HELP) { usage(stdout, &defaults); return 0; }
    if (prc == CK_OPT_BAD) {
        fprintf(stderr, "tagpredict: %s\n", err);
        usage(stderr, &defaults);
        return 2;
    }
    const char *path = o.path, *title = o.title, *desc = o.desc;
    const int as_json = o.as_json;
    if (!title) { fprintf(stderr, "tagpredict: --title is required\n"); usage(stderr, &defaults); return 2; }
    /* The same rules as a row of the data files: a title with a word in it,
     * UTF-8 text. */
    char why[128];
    if (!title[strspn(title, " \t\r\n")]) {
        fprintf(stderr, "tagpredict: --title is empty (a project's title is required, as in the data files)\n");
        return 2;
    }
    const char *bad = mwml_check_field(title, why, sizeof why)  ? "--title"
                      : mwml_check_field(desc, why, sizeof why) ? "--description" : NULL;
    if (bad) {
        fprintf(stderr, "tagpredict: %s: %s: the text must be UTF-8\n", bad, why);
        return 2;
    }

    checkpoint ck;
    if (ckpt_load(path, &ck, err, sizeof err)) {
        fprintf(stderr, "tagpredict: %s\n", err);
        if (ckpt_probe(path) == 0) fprintf(stderr, "tagpredict: train a model first: mpirun -np 2 build/bin/tagtrain\n");
        return 1;
    }
    /* The text goes through the featurizer the model was trained with, into
     * one CSR row, and one forward pass. */
    featurizer f = {0};
    feat_csr x = {0};
    mlp m;
    mwml_row row = {(char *)"", (char *)"", (char *)title, (char *)desc, 0};
    mwml_data one = {&row, 1};
    if (feat_load_opts(&f, ck.cfg.feat_dim, &ck.cfg.feat, ck.idf) || feat_transform_csr(&f, &one, NULL, 0, &x) ||
        mlp_create(&m, &ck.cfg.model, 1)) {
        fprintf(stderr, "tagpredict: out of memory\n");
        return 1;
    }
    memcpy(m.params, ck.params, m.nparams * sizeof(float));
    const csr_rows xr = {x.ptr, x.idx, x.val};
    const size_t r0 = 0;
    mlp_forward(&m, &xr, &r0, NULL, 1, 0, NULL);
    int best = 0;
    for (int j = 1; j < MLP_CLASSES; j++) if (m.probs[j] > m.probs[best]) best = j;
    if (as_json) {
        ck_json j;
        ck_json_open(&j, stdout, CK_JSON_COMPACT);
        ck_json_str(&j, "tag", mwml_tags[best]);
        ck_json_obj(&j, "probabilities");
        for (int c = 0; c < MLP_CLASSES; c++) ck_json_num(&j, mwml_tags[c], m.probs[c]);
        ck_json_end(&j);
        ck_json_end(&j);
    } else {
        printf("tag: %s\n", mwml_tags[best]);
        for (int j = 0; j < MLP_CLASSES; j++) printf("  %-28s %.4f\n", mwml_tags[j], m.probs[j]);
    }
    const int rc = ck_stdout_done("tagpredict");
    mlp_free(&m);
    feat_free(&f);
    feat_csr_free(&x);
    ckpt_free(&ck);
    return rc ? 1 : 0;
}
