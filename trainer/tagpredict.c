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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_util.h"
#include "mwml.h"
#include "features.h"
#include "model.h"
#include "ckpt.h"

static void usage(FILE *f)
{
    fprintf(f,
"usage: tagpredict [--checkpoint FILE] --title TEXT [--description TEXT] [--json]\n"
"Print the predicted tag and the probability of each of the 4 tags.\n"
"  --checkpoint FILE   a tagtrain checkpoint: best.ckpt (default runs/latest/best.ckpt),\n"
"                      or a last.ckpt (its latest parameters)\n"
"  --title TEXT        project title (required)\n"
"  --description TEXT  project description (default empty)\n"
"  --json              one JSON object instead of the table\n");
}

int main(int argc, char **argv)
{
    const char *path = "runs/latest/best.ckpt", *title = NULL, *desc = "";
    int as_json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        if (!strcmp(a, "--json")) { as_json = 1; continue; }
        if (!strcmp(a, "--checkpoint") || !strcmp(a, "--title") || !strcmp(a, "--description")) {
            if (i + 1 >= argc) { fprintf(stderr, "tagpredict: %s needs a value\n", a); return 2; }
            const char *v = argv[++i];
            if (!strcmp(a, "--checkpoint")) path = v;
            else if (!strcmp(a, "--title")) title = v;
            else desc = v;
            continue;
        }
        fprintf(stderr, "tagpredict: unknown argument '%s'\n", a);
        usage(stderr);
        return 2;
    }
    if (!title) { fprintf(stderr, "tagpredict: --title is required\n"); usage(stderr); return 2; }
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

    char err[1024];
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
