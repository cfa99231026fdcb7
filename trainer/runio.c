/*
 * runio.c — tagtrain's output (runio.h): its files, the --log records, the
 * banner, the epoch line and the summary. Each record's fields are written
 * in one function, from the report struct, so the schema is read in one
 * place (trainer/README.md documents it).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "collkit_util.h"
#include "mwml.h"
#include "runio.h"

/* What every output file of tagtrain carries in its first line, so that a
 * continued run may go on with it and with nothing else. */
#define SIGNATURE "\"program\":\"tagtrain\""

/* ------------------------------------------------------------ files */

/* Whether the first line of path says tagtrain wrote it. */
static int written_by_tagtrain(const char *path)
{
    char head[512] = "";
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f) fclose(f);
    head[k] = '\0';
    char *nl = strchr(head, '\n');
    if (nl) *nl = '\0';
    return strstr(head, SIGNATURE) != NULL;
}

/* The log of a continued run, opened to append: an attempt killed
 * mid-record left a line without its end, which is ended first so that the
 * next record starts a line of its own. */
static FILE *open_append(const char *path)
{
    FILE *f = fopen(path, "a+");
    if (f && fseek(f, -1, SEEK_END) == 0 && fgetc(f) != '\n') {
        fseek(f, 0, SEEK_END);
        fputc('\n', f);
    }
    return f;
}

int tt_output_start(const char *opt, const char *path, int overwrite, int continued, FILE **f, char *err,
                    size_t cap)
{
    struct stat st;
    const int exists = stat(path, &st) == 0, regular = exists && S_ISREG(st.st_mode);
    /* Not even with --overwrite: a checkpoint is a run's saved work, and a
     * log written over it (a slip of the path) would lose it. */
    if (regular && ckpt_probe(path) == 1) {
        snprintf(err, cap, "%s %s holds a tagtrain checkpoint: never written over, not even with --overwrite "
                 "(give another file)", opt, path);
        return -1;
    }
    char why[1024];
    int go_on = 0;   /* a continued run's own file */
    if (ck_output_free(path, overwrite, why, sizeof why)) {
        const int taken = regular && st.st_size > 0 && !overwrite;
        go_on = taken && continued && written_by_tagtrain(path);
        if (!go_on && taken) {
            snprintf(err, cap, "%s %s%s", opt, why,
                     continued ? "; it is no file tagtrain wrote, which a resumed run would continue" : "");
            return -1;
        }
        if (!go_on) {
            snprintf(err, cap, "%s %s: cannot open for writing: %s", opt, path, why);
            return -1;
        }
    }
    if (!f) return 0;   /* written at the end */
    *f = go_on ? open_append(path) : ck_output_open(path, why, sizeof why);
    if (*f) return 0;
    if (go_on) snprintf(why, sizeof why, "%s", strerror(errno));
    if (exists && S_ISFIFO(st.st_mode))
        snprintf(err, cap, "%s %s: %s (nobody reads it: refusing to wait for a reader)", opt, path, why);
    else snprintf(err, cap, "%s %s: cannot open for writing: %s", opt, path, why);
    return -1;
}

FILE *tt_output_open(const char *opt, const char *path, char *err, size_t cap)
{
    char why[512];
    FILE *f = ck_output_open(path, why, sizeof why);
    if (!f) snprintf(err, cap, "%s %s: cannot open for writing: %s", opt, path, why);
    return f;
}

int tt_output_ok(FILE *f, const char *opt, const char *path, char *err, size_t cap)
{
    if (fflush(f) == 0 && !ferror(f)) return 1;
    snprintf(err, cap, "%s %s: write failed: %s", opt, path, strerror(errno ? errno : EIO));
    return 0;
}

/* ------------------------------------------------------------ the banner */

static void banner_model(FILE *f, const tt_report *r)
{
    const train_config *tc = r->tc;
    const tt_sync_info *s = r->sync;
    fprintf(f, "tagtrain: %d rank%s, algo %s%s on the %s transport, %zu train / %zu val", r->p, r->p > 1 ? "s" : "",
            s->algo, r->algo_auto ? " (auto)" : "", s->transport, r->ntr, r->nva);
    if (r->cv) fprintf(f, " rows (fold %d of %d; holdout not read)", tc->fold + 1, tc->folds);
    else fprintf(f, " / %zu holdout rows", r->nhold);
    fprintf(f, ", %d features, model %d", tc->feat_dim, tc->feat_dim);
    for (int i = 0; i < tc->model.nhidden; i++) fprintf(f, "-%d", tc->model.hidden[i]);
    fprintf(f, "-%d (%zu params), batch %d x accum %d, %s lr %g\n", MLP_CLASSES, r->nparams, tc->batch, tc->accum,
            opt_kind_name(tc->opt.kind), tc->opt.lr);
}

/* What a rank holds between steps: the parameters whole, the gradients whole
 * (--zero 2: its shard), the optimizer's m and v for its shard (all of them
 * when replicated). */
static void banner_memory(FILE *f, const tt_report *r)
{
    const tt_sync_info *s = r->sync;
    const double dense = (double)r->nparams * sizeof(float);
    fprintf(f, "  memory per rank: parameters %.2f MB, gradients %.2f MB, optimizer state %.2f MB",
            (s->param_bytes ? (double)s->param_bytes : dense) / 1e6, s->grad_bytes / 1e6, s->state_bytes / 1e6);
    if (s->tp > 1)
        fprintf(f, " (--tp %d: W_0 with its gradients and state %.2f MB, whole %.2f MB)", s->tp, s->w0_bytes / 1e6,
                s->w0_bytes_replicated / 1e6);
    if (s->zero == 1) fprintf(f, " (replicated: %.2f MB)", s->state_replicated / 1e6);
    if (s->zero == 2)
        fprintf(f, " (replicated: gradients %.2f MB, optimizer state %.2f MB)", dense / 1e6, s->state_replicated / 1e6);
    fprintf(f, "\n  data: %s%s%s (%.0f non-zero features per train row)\n", r->path_data, r->cv ? "" : ", ",
            r->path_hold, r->nnz_per_row);
}

void report_banner(FILE *f, const tt_report *r)
{
    const tt_sync_info *s = r->sync;
    banner_model(f, r);
    fprintf(f, "  %s\n", s->line);
    banner_memory(f, r);
    if (s->device)
        fprintf(f, "  device: cuda (parameters, gradients and optimizer state in GPU memory)%s%s\n",
                s->device_note[0] ? "; " : "", s->device_note);
    if (r->resume) fprintf(f, "  resumed from %s after epoch %d\n", r->resume, r->start_epoch);
    if (r->save_note[0]) fprintf(f, "  %s\n", r->save_note);
    if (r->other_option)
        fprintf(f, "  note: this run replaces the checkpoints of another run (its %s differs) in %s at its first "
                "save: the default --save holds the latest run; --save DIR keeps a run's own\n", r->other_option,
                r->cdir->dir);
    if (r->repaired[0]) fprintf(f, "  repaired %s: %s; rewritten from the training state\n", r->cdir->best, r->repaired);
    fflush(f);
}

/* ------------------------------------------------------------ epochs and the summary */

void report_epoch(FILE *f, const tt_report *r, const tt_epoch_rec *e)
{
    const double all = e->comm_s + e->compute_s, comm_frac = all > 0 ? e->comm_s / all : 0.0;
    fprintf(f, "epoch %3d/%d  train loss %.4f", e->epoch, r->tc->epochs, e->train_loss);
    if (r->nva) fprintf(f, "  val loss %.4f  val acc %.4f  val F1 %.4f", r->val.loss, r->val.accuracy, r->val.w_f1);
    fprintf(f, "  %.0f samples/s  comm %.1f%%%s%s\n", (double)e->samples / e->time_s, 100.0 * comm_frac,
            e->improved && r->nva ? "  *best" : "", r->check_sync ? "  [sync ok]" : "");
    fflush(f);
}

static double comm_fraction(const tt_report *r)
{
    const double all = r->comm_all[0] + r->comm_all[1];
    return all > 0 ? r->comm_all[0] / all : 0.0;
}

static double samples_per_s(const tt_report *r) { return r->train_time > 0 ? r->samples_done / r->train_time : 0.0; }

/* The epochs after the first: the first of a run pays the warm-up (page
 * faults, and on a GPU the CUDA context's lazy module loading, cuBLAS's
 * first calls, the IPC mappings: 0.21 s of 0.23 on an H100), so the steady
 * rate is what benchmarks compare, as nccl-tests leaves out its warm-up
 * iterations. One epoch: all of it. */
static double steady_per_s(const tt_report *r)
{
    return r->steady_time > 0 ? r->steady_samples / r->steady_time : samples_per_s(r);
}

void report_summary(FILE *f, const tt_report *r)
{
    const train_config *tc = r->tc;
    if (r->cv) {
        fprintf(f, "cross-validation fold %d/%d: best epoch %d (val loss %.4f): val weighted F1 %.4f; last epoch "
                "val F1 %.4f\n", tc->fold + 1, tc->folds, r->best_epoch, r->best_val, r->best_f1, r->val.w_f1);
    } else if (!r->quiet) {
        if (r->nva)
            fprintf(f, "\nholdout (%zu rows, best model: epoch %d, val loss %.4f):\n", r->nhold, r->best_epoch,
                    r->best_val);
        else fprintf(f, "\nholdout (%zu rows, the model of the last epoch, %d: no validation rows):\n", r->nhold,
                     r->best_epoch);
        metrics_print(f, &r->ho, mwml_tags);
    }
    fprintf(f, "trained %d epoch%s in %.2f s (%.2f s total): %.0f samples/s", r->trained, r->trained == 1 ? "" : "s",
            r->train_time, ck_now() - r->t_start, samples_per_s(r));
    if (r->trained > 1) fprintf(f, " (%.0f after the first epoch)", steady_per_s(r));
    fprintf(f, ", comm fraction %.3f", comm_fraction(r));
    if (!r->cv) fprintf(f, ", holdout weighted F1 %.4f", r->ho.w_f1);
    fprintf(f, "\npeak resident memory per rank: %.1f MB (the largest rank's); after training %.1f MB, of it "
            "gradients %.2f MB\n", r->rss[0] / 1e6, r->rss[1] / 1e6, r->rss[2] / 1e6);
    if (r->sync->pp > 1)
        fprintf(f, "pipeline bubble: measured %.3f of the stages' time (waiting for a neighbour), model "
                "(S-1)/(M+S-1) = %.3f (%s, %d stages, %d micro-batch%s)\n", r->sync->bubble_measured,
                r->sync->bubble_model, r->sync->pp_sched, r->sync->pp, r->sync->microbatches,
                r->sync->microbatches == 1 ? "" : "es");
    if (r->cdir && r->trained > 0)
        fprintf(f, "checkpoints: %s (%s), %s\n", r->cdir->best, r->nva ? "best by val loss" : "the last epoch",
                r->cdir->last);
}

/* ------------------------------------------------------------ the log: one JSON line per record */

static void record(ck_json *j, FILE *f, const char *type)
{
    ck_json_open(j, f, CK_JSON_COMPACT);
    ck_json_str(j, "type", type);
}

void log_run(FILE *f, const tt_report *r)
{
    const tt_sync_info *s = r->sync;
    const train_config *tc = r->tc;
    const long long dense = (long long)(r->nparams * sizeof(float));
    ck_json j;
    record(&j, f, "run");
    ck_json_str(&j, "program", "tagtrain");
    ck_json_int(&j, "ranks", r->p);
    ck_json_str(&j, "algo", s->algo);
    ck_json_str(&j, "transport", s->transport);
    ck_json_str(&j, "allreduce", s->mode);
    ck_json_str(&j, "device", s->device ? "cuda" : "cpu");
    ck_json_int(&j, "params", (long long)r->nparams);
    ck_json_int(&j, "gradient_bytes", dense);
    ck_json_int(&j, "zero", s->zero);
    if (s->zero) {
        ck_json_str(&j, "rs_algo", s->rs_algo);
        ck_json_str(&j, "ag_algo", s->ag_algo);
    }
    ck_json_int(&j, "tp", s->tp);
    if (s->tp > 1) {
        ck_json_str(&j, "tp_algo", s->tp_algo);
        ck_json_int(&j, "w0_bytes_per_rank", (long long)s->w0_bytes);
        ck_json_int(&j, "w0_bytes_replicated", (long long)s->w0_bytes_replicated);
    }
    ck_json_int(&j, "pp", s->pp);
    if (s->pp > 1) {
        ck_json_str(&j, "pp_schedule", s->pp_sched);
        ck_json_int(&j, "microbatches", s->microbatches);
        ck_json_num(&j, "bubble_model", s->bubble_model);
    }
    ck_json_int(&j, "activation_bytes_per_rank", (long long)s->act_bytes);
    ck_json_int(&j, "param_bytes_per_rank", s->param_bytes ? (long long)s->param_bytes : dense);
    ck_json_int(&j, "grad_bytes_per_rank", (long long)s->grad_bytes);
    if (s->zero == 2) {
        ck_json_int(&j, "grad_buckets", s->grad_buckets);
        ck_json_int(&j, "grad_bucket_bytes", (long long)s->grad_bucket_bytes);
    }
    ck_json_int(&j, "optim_state_bytes_per_rank", (long long)s->state_bytes);
    ck_json_int(&j, "optim_state_bytes_replicated", (long long)s->state_replicated);
    ck_json_int(&j, "train_rows", (long long)r->ntr);
    ck_json_int(&j, "val_rows", (long long)r->nva);
    ck_json_num(&j, "nnz_per_row", r->nnz_per_row);
    ck_json_int(&j, "batch", tc->batch);
    ck_json_int(&j, "accum", tc->accum);
    ck_json_int(&j, "epochs", tc->epochs);
    ck_json_int(&j, "seed", (long long)tc->seed);
    if (r->cv) {
        ck_json_int(&j, "folds", tc->folds);
        ck_json_int(&j, "fold", tc->fold + 1);
    }
    ck_json_end(&j);
}

void log_step(FILE *f, const tt_step_rec *s)
{
    ck_json j;
    record(&j, f, "step");
    ck_json_int(&j, "epoch", s->epoch);
    ck_json_int(&j, "step", s->step);
    ck_json_int(&j, "global_step", s->global_step);
    ck_json_int(&j, "samples", (long long)s->samples);
    ck_json_num(&j, "lr", s->lr);
    ck_json_num(&j, "compute_s", s->compute_s);
    ck_json_num(&j, "comm_s", s->comm_s);
    ck_json_int(&j, "allreduce_bytes", (long long)s->allreduce_bytes);
    if (s->sent_bytes >= 0) ck_json_int(&j, "sent_bytes", s->sent_bytes);
    ck_json_num(&j, "step_s", s->step_s);
    ck_json_num(&j, "fb_s", s->fb_s);
    if (s->wait_s >= 0) ck_json_num(&j, "wait_s", s->wait_s);
    ck_json_num(&j, "optimizer_s", s->optimizer_s);
    if (s->calls_s >= 0) ck_json_num(&j, "calls_s", s->calls_s);
    if (s->calls_entry_s >= 0) ck_json_num(&j, "calls_entry_s", s->calls_entry_s);
    if (s->calls_proper_s >= 0) ck_json_num(&j, "calls_proper_s", s->calls_proper_s);
    ck_json_end(&j);
}

void log_epoch(FILE *f, const tt_report *r, const tt_epoch_rec *e)
{
    const int has_val = r->nva > 0;
    const double all = e->comm_s + e->compute_s;
    ck_json j;
    record(&j, f, "epoch");
    ck_json_int(&j, "epoch", e->epoch);
    ck_json_num(&j, "train_loss", e->train_loss);
    ck_json_num(&j, "val_loss", has_val ? r->val.loss : NAN);
    ck_json_num(&j, "val_accuracy", has_val ? r->val.accuracy : NAN);
    ck_json_num(&j, "val_f1", has_val ? r->val.w_f1 : NAN);
    ck_json_num(&j, "time_s", e->time_s);
    ck_json_int(&j, "samples", (long long)e->samples);
    ck_json_num(&j, "samples_per_s", (double)e->samples / e->time_s);
    ck_json_num(&j, "compute_s", e->compute_s / r->p);
    ck_json_num(&j, "comm_s", e->comm_s / r->p);
    ck_json_num(&j, "comm_fraction", all > 0 ? e->comm_s / all : 0.0);
    ck_json_end(&j);
}

void log_summary(FILE *f, const tt_report *r)
{
    const tt_sync_info *s = r->sync;
    const double steps = (double)r->steps_done;
    const int has_val = r->nva > 0;
    ck_json j;
    record(&j, f, "summary");
    ck_json_int(&j, "ranks", r->p);
    ck_json_str(&j, "algo", s->algo);
    ck_json_str(&j, "transport", s->transport);
    ck_json_str(&j, "allreduce", s->mode);
    ck_json_int(&j, "epochs", r->trained);
    ck_json_num(&j, "train_time_s", r->train_time);
    ck_json_num(&j, "samples_per_s", samples_per_s(r));
    ck_json_num(&j, "comm_fraction", comm_fraction(r));
    ck_json_int(&j, "steps", r->steps_done);
    ck_json_num(&j, "compute_per_step_s", steps > 0 ? r->comm_all[1] / r->p / steps : 0.0);
    ck_json_num(&j, "comm_per_step_s", steps > 0 ? r->comm_all[0] / r->p / steps : 0.0);
    ck_json_num(&j, "allreduce_bytes_per_step", steps > 0 ? r->bytes_total / steps : 0.0);
    ck_json_num(&j, "steady_samples_per_s", steady_per_s(r));
    ck_json_num(&j, "peak_rss_bytes", r->rss[0]);
    ck_json_num(&j, "rss_after_training_bytes", r->rss[1]);
    ck_json_num(&j, "grad_resident_bytes", r->rss[2]);
    if (s->pp > 1) {
        ck_json_num(&j, "bubble_measured", s->bubble_measured);
        ck_json_num(&j, "bubble_model", s->bubble_model);
    }
    ck_json_int(&j, "best_epoch", r->best_epoch);
    ck_json_num(&j, "best_val_loss", r->best_val);
    ck_json_num(&j, "best_val_f1", has_val ? r->best_f1 : NAN);
    ck_json_num(&j, "last_val_f1", has_val ? r->val.w_f1 : NAN);
    if (!r->cv) {
        ck_json_num(&j, "holdout_f1", r->ho.w_f1);
        ck_json_num(&j, "holdout_accuracy", r->ho.accuracy);
    }
    ck_json_end(&j);
}

void write_metrics(FILE *f, const tt_report *r)
{
    ck_json j;
    ck_json_open(&j, f, CK_JSON_COMPACT);
    ck_json_str(&j, "program", "tagtrain");
    ck_json_str(&j, "set", "holdout");
    ck_json_int(&j, "best_epoch", r->best_epoch);
    metrics_json(&j, &r->ho, mwml_tags);
    ck_json_end(&j);
}
