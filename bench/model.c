/*
 * model.c — the arithmetic around the α-β-γ model: each algorithm's cost is
 * its own (ck_algo.cost, stated and derived in collectives/algos/<name>.c);
 * here are the prediction with fitted parameters, the least-squares fit of α
 * and β, the crossover search and the parameter files.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_util.h"
#include "model.h"

/* The algorithm's cost on one link class. */
static double cost_on(const ck_algo *a, const bm_params *m, int inter, int p, double n)
{
    if (!a || !a->cost) return NAN;
    const ck_cost_params cp = {.alpha = inter ? m->alpha_inter : m->alpha, .beta = inter ? m->beta_inter : m->beta,
                               .gamma = m->gamma, .chunk = m->chunk};
    return a->cost(&cp, p, n);
}

static int pow2(int x) { return x > 0 && !(x & (x - 1)); }

/* The ranks span nodes and the model can price the link between them. */
static int spans_nodes(const bm_params *m, int p)
{
    return m->node_ranks >= 1 && m->node_ranks < p && (m->links & BM_LINK_INTER);
}

/* hier:INTRA/INTER: INTRA's all-reduce of n bytes among the k ranks of a
 * node (its reduce-scatter and all-gather halves, inside the node), INTER's
 * of each rank's n/k-byte shard among the p/k nodes. NAN when the name is
 * not two registered algorithms. */
static double hier_cost(const char *name, const bm_params *m, int p, int k, double n)
{
    char intra[64], inter[64];
    if (sscanf(name, "hier:%63[^/]/%63s", intra, inter) != 2) return NAN;
    const ck_algo *ai = ck_algo_find(intra), *ax = ck_algo_find(inter);
    return cost_on(ai, m, 0, k, n) + cost_on(ax, m, 1, p / k, n / k);
}

/* Priced step by step on the link each step crosses (nodes of k consecutive
 * ranks, k < p). The schedules of rd and rabenseifner pair rank r with
 * r ^ d: distances below k stay inside a node. rd's log2 k steps inside
 * and log2(p/k) across each move n bytes; Rabenseifner halves from d = p/2
 * down, so its steps across nodes carry the first n(1 - k/p) bytes of each
 * phase and its steps inside the rest, an all-reduce of n·k/p among k. */
static double split_cost(const ck_algo *a, const bm_params *m, int p, double n)
{
    const int k = m->node_ranks;
    const int exact = pow2(p) && pow2(k);
    if (exact && !strcmp(a->name, "rd")) return cost_on(a, m, 0, k, n) + cost_on(a, m, 1, p / k, n);
    if (exact && !strcmp(a->name, "rabenseifner"))
        return cost_on(a, m, 1, p / k, n) + cost_on(a, m, 0, k, n * k / p);
    if (!strncmp(a->name, "hier:", 5) && p % k == 0) {
        double t = hier_cost(a->name, m, p, k, n);
        if (!isnan(t)) return t;
    }
    return cost_on(a, m, 1, p, n);
}

double bm_predict(const ck_algo *a, const bm_params *m, int p, double n)
{
    if (!a || !a->cost || !m || p < 1) return NAN;
    return spans_nodes(m, p) ? split_cost(a, m, p, n) : cost_on(a, m, 0, p, n);
}

int bm_node_blocks(const int *node, int p)
{
    int k = 1;   /* the first node's run of consecutive ranks */
    while (k < p && node[k] == node[0]) k++;
    for (int r = 0; r < p; r++)   /* every rank on its block's node ... */
        if (node[r] != node[r - r % k]) return 1;
    for (int r = k; r < p; r += k)   /* ... and every block a node of its own */
        for (int q = 0; q < r; q += k)
            if (node[q] == node[r]) return 1;
    return k;
}

const char *bm_link_mismatch(const bm_params *m, int p)
{
    const int spans = m->node_ranks >= 1 && m->node_ranks < p;
    if (spans && !(m->links & BM_LINK_INTER))
        return "the ranks span nodes but the model knows no inter-node link (calibrated inside one node, or a "
               "file with one link): every step is priced with that link, so steps between nodes are predicted "
               "too fast";
    if (!spans && p > 1 && !(m->links & BM_LINK_INTRA) && (m->links & BM_LINK_INTER))
        return "the ranks share one node but the model's link was measured between nodes: every step is priced "
               "with the inter-node link, so the predictions are too slow";
    return NULL;
}

int bm_fit_alpha_beta(const double *n, const double *t, int k, double *alpha, double *beta)
{
    double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
    for (int i = 0; i < k; i++) {
        if (!(t[i] > 0)) continue;
        double w = 1.0 / (t[i] * t[i]);
        s0 += w; s1 += w * n[i]; s2 += w * n[i] * n[i];
        t0 += w * t[i]; t1 += w * n[i] * t[i];
    }
    double det = s0 * s2 - s1 * s1;
    if (s0 == 0 || !(det > 1e-12 * s0 * s2)) return -1;   /* one size only: α and β not separable */
    double b = (s0 * t1 - s1 * t0) / det, a = (s2 * t0 - s1 * t1) / det;
    if (a < 0) { a = 0; b = t1 / s2; }        /* best line through the origin */
    if (b < 0) { b = 0; a = t0 / s0; }        /* best constant */
    *alpha = a;
    *beta = b;
    return 0;
}

/* The fastest algorithm at n; the current one `cur` keeps the title unless
 * another is faster by more than the tolerance (ties go to `cur`, or to the
 * earlier entry). -1 when cur < 0 and no prediction is a finite number (no
 * cost function, or NaN or inf from the parameters): the caller must check. */
static int best_at(const ck_algo *const *algos, int na, const bm_params *m, int p, double n, int cur, double tol)
{
    int best = -1;
    double bt = INFINITY;
    for (int i = 0; i < na; i++) {
        double t = bm_predict(algos[i], m, p, n);
        if (t < bt) { bt = t; best = i; }
    }
    if (cur >= 0 && best != cur && !(bt < bm_predict(algos[cur], m, p, n) * (1 - tol))) return cur;
    return best;
}

int bm_crossovers(const ck_algo *const *algos, int na, const bm_params *m, int p, double n_lo, double n_hi,
                  double tol, double *size, int *from, int *to, int max, int *best_at_lo)
{
    /* Scan a fine geometric grid (8 points per doubling), then bisect each
     * change of winner down to a relative width of 1e-9. */
    const double step = pow(2.0, 1.0 / 8);
    if (best_at_lo) *best_at_lo = -1;
    if (!(n_lo > 0) || !(n_hi < INFINITY)) return -1;   /* the grid would never reach n_hi */
    int found = 0, cur = best_at(algos, na, m, p, n_lo, -1, tol);
    if (best_at_lo) *best_at_lo = cur;
    if (cur < 0) return -1;   /* no finite time at n_lo: no fastest algorithm to start from */
    for (double a = n_lo; a < n_hi && found < max;) {
        double b = fmin(a * step, n_hi);
        int nb = best_at(algos, na, m, p, b, cur, tol);
        if (nb != cur) {
            double lo = a, hi = b;
            while (hi - lo > 1e-9 * hi) {
                double mid = 0.5 * (lo + hi);
                if (best_at(algos, na, m, p, mid, cur, tol) == cur) lo = mid; else hi = mid;
            }
            size[found] = hi;
            from[found] = cur;
            to[found] = best_at(algos, na, m, p, hi, cur, tol);
            cur = to[found];
            found++;
            a = hi;            /* continue from the crossover: catches two changes inside one grid step */
            continue;
        }
        a = b;
    }
    return found;
}

int bm_params_save(const char *path, const bm_params *m, const char *comment)
{
    char why[256];
    FILE *f = ck_output_open(path, why, sizeof why);
    if (!f) return -1;
    fprintf(f, "# collkit alpha-beta-gamma parameters%s%s\n", comment ? ": " : "", comment ? comment : "");
    fprintf(f, "alpha_us %.6g\nbeta_ns_per_byte %.6g\ngamma_ns_per_byte %.6g\nmemcpy_gbs %.6g\nchunk_bytes %.0f\n",
            m->alpha * 1e6, m->beta * 1e9, m->gamma * 1e9, m->memcpy_bw / 1e9, m->chunk);
    /* The link classes where the ping-pong told them apart (alpha_us above:
     * the link inside a node, or the only one measured). */
    if (m->links)
        fprintf(f, "# links: 1 = inside a node measured, 2 = between nodes, 3 = both\nlinks %u\n", m->links);
    if (m->links & BM_LINK_INTER)
        fprintf(f, "alpha_inter_us %.6g\nbeta_inter_ns_per_byte %.6g\n", m->alpha_inter * 1e6, m->beta_inter * 1e9);
    return fclose(f) == 0 ? 0 : -1;
}

/* The link keys of a parameter file: both inter-node keys or neither, and
 * links (when given) 1, 2 or 3, saying inter only where they are there. A
 * file without them knows one link of no stated class (links 0). */
static int links_read(const char *path, bm_params *r, int have, double links, char *err, size_t errlen)
{
    const int inter = have & 24;
    if (inter && inter != 24) {
        snprintf(err, errlen, "%s: alpha_inter_us and beta_inter_ns_per_byte go together", path);
        return -1;
    }
    if (links >= 0 && (links != floor(links) || links < 1 || links > 3 || (links >= 2) != (inter != 0))) {
        snprintf(err, errlen, "%s: links %g: want 1 (inside a node), 2 or 3 (with the inter-node keys)", path, links);
        return -1;
    }
    r->links = links >= 0 ? (unsigned)links : inter ? BM_LINK_INTRA | BM_LINK_INTER : 0;
    return 0;
}

int bm_params_load(const char *path, bm_params *m, char *err, size_t errlen)
{
    char why[256];
    FILE *f = ck_input_open(path, why, sizeof why);
    if (!f) { snprintf(err, errlen, "cannot open model file '%s': %s", path, why); return -1; }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    double v;
    int have = 0, lineno = 0, at[8] = {0};
    double links = -1;
    bm_params r = {.chunk = 256 * 1024};
    errno = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (memchr(line, '\0', (size_t)len)) {
            snprintf(err, errlen, "%s:%d: a NUL byte: not a text file", path, lineno);
            goto fail;
        }
        char *s = line + strspn(line, " \t");
        if (*s == '#' || *s == '\n' || !*s) continue;
        /* "key value": the key up to white space, the value the rest of the
         * line without its trailing white space, a finite number >= 0 (NaN or
         * inf would leave no fastest algorithm, and no time to print). */
        size_t klen = strcspn(s, " \t\r\n");
        char *val = s + klen;
        val += strspn(val, " \t");
        size_t vlen = strlen(val);
        while (vlen && strchr(" \t\r\n", val[vlen - 1])) vlen--;
        val[vlen] = '\0';
        s[klen] = '\0';
        if (!*val) {
            snprintf(err, errlen, "%s:%d: expected 'key value' with a value >= 0, got '%s' alone", path, lineno, s);
            goto fail;
        }
        /* key, where it goes, the unit it is written in */
        const struct { const char *key; double *to, unit; int bit; } keys[] = {
            {"alpha_us", &r.alpha, 1e-6, 1},
            {"beta_ns_per_byte", &r.beta, 1e-9, 2},
            {"gamma_ns_per_byte", &r.gamma, 1e-9, 4},
            {"memcpy_gbs", &r.memcpy_bw, 1e9, 0},
            {"chunk_bytes", &r.chunk, 1, 0},
            {"alpha_inter_us", &r.alpha_inter, 1e-6, 8},
            {"beta_inter_ns_per_byte", &r.beta_inter, 1e-9, 16},
            {"links", &links, 1, 0},
        };
        size_t k = 0;
        while (k < sizeof keys / sizeof keys[0] && strcmp(s, keys[k].key)) k++;
        if (k == sizeof keys / sizeof keys[0]) {
            snprintf(err, errlen, "%s:%d: unknown key '%s'", path, lineno, s);
            goto fail;
        }
        if (at[k]) {   /* which of the two would count is not for the reader to guess */
            snprintf(err, errlen, "%s:%d: %s given twice (first on line %d)", path, lineno, s, at[k]);
            goto fail;
        }
        at[k] = lineno;
        int bad = ck_parse_double(val, 0, DBL_MAX, &v, why, sizeof why);
        if (!bad && !isfinite(v * keys[k].unit)) { bad = 1; snprintf(why, sizeof why, "too large"); }
        if (bad) {
            snprintf(err, errlen, "%s:%d: %s '%s': %s (want a number >= 0)", path, lineno, s, val, why);
            goto fail;
        }
        *keys[k].to = v * keys[k].unit;
        have |= keys[k].bit;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
        goto fail;
    }
    fclose(f);
    free(line);
    if ((have & 7) != 7) {
        snprintf(err, errlen, "%s: needs alpha_us, beta_ns_per_byte and gamma_ns_per_byte", path);
        return -1;
    }
    if (links_read(path, &r, have, links, err, errlen)) return -1;
    *m = r;
    return 0;
fail:
    fclose(f);
    free(line);
    return -1;
}

void bm_params_print(FILE *out, const char *prefix, const bm_params *m)
{
    fprintf(out, "%salpha = %.3f us, beta = %.4f ns/B (%.2f GB/s), gamma = %.4f ns/B (%.2f GB/s reduce)",
            prefix, m->alpha * 1e6, m->beta * 1e9, m->beta > 0 ? 1e-9 / m->beta : 0,
            m->gamma * 1e9, m->gamma > 0 ? 1e-9 / m->gamma : 0);
    if (m->memcpy_bw > 0) fprintf(out, ", memcpy = %.2f GB/s", m->memcpy_bw / 1e9);
    fprintf(out, "\n");
    if (m->links & BM_LINK_INTER)
        fprintf(out, "%slink between nodes: alpha = %.3f us, beta = %.4f ns/B (%.2f GB/s)%s\n", prefix,
                m->alpha_inter * 1e6, m->beta_inter * 1e9, m->beta_inter > 0 ? 1e-9 / m->beta_inter : 0,
                m->links & BM_LINK_INTRA ? "; the line above: inside a node"
                                         : "; no node holds two ranks: the line above is this link too");
}

const char *bm_size_str(double bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) { bytes /= 1024; u++; }
    if (bytes == floor(bytes)) snprintf(buf, len, "%.0f %s", bytes, unit[u]);
    else snprintf(buf, len, "%.1f %s", bytes, unit[u]);
    return buf;
}
