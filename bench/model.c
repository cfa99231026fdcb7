/*
 * model.c — one table: algorithm name -> α-β-γ cost. Each formula is the
 * one stated at the top of collectives/algos/<name>.c; when an algorithm
 * changes how it moves data, its row here changes with it.
 *
 * Notation: p ranks, n bytes per rank, c = chunk bytes (ck_config);
 *   p2 = largest power of two <= p: for non-power-of-two p, rd and
 *        rabenseifner fold the extra ranks in first and out at the end, one
 *        more exchange of n bytes each way plus one reduction: 2(α + nβ) + nγ.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

static double log2i(int p) { int l = 0; while ((1 << l) < p) l++; return l; }   /* ceil(log2 p) */
static int pow2_floor(int p) { int q = 1; while (q * 2 <= p) q *= 2; return q; }
static double fold(const bm_params *m, int p, double n)
{
    return p == pow2_floor(p) ? 0.0 : 2 * (m->alpha + n * m->beta) + n * m->gamma;
}
static double nchunks(double bytes, double chunk)
{
    if (chunk <= 0 || bytes <= chunk) return 1;
    return ceil(bytes / chunk);
}

/* naive: reduce to rank 0, broadcast from rank 0, one whole buffer at a time. */
static double cost_naive(const bm_params *m, int p, double n)
{
    if (p == 1) return 0;
    return 2 * (p - 1) * (m->alpha + n * m->beta) + (p - 1) * n * m->gamma;
}

/* ring: 2(p-1) steps of n/p bytes, p-1 reductions of n/p. */
static double cost_ring(const bm_params *m, int p, double n)
{
    if (p == 1) return 0;
    double f = (double)(p - 1) / p;
    return 2 * (p - 1) * m->alpha + 2 * f * n * m->beta + f * n * m->gamma;
}

/* ring_pipelined: the ring with each block cut into nc = ceil(n/(p·c))
 * chunks sent nonblocking: 2(p-1)·nc messages, and in a reduce-scatter step
 * the reduction of chunk k hides behind the arrival of chunk k+1, so a step
 * costs max(β, γ) per byte plus one exposed chunk, not β + γ. */
static double cost_ring_pipelined(const bm_params *m, int p, double n)
{
    if (p == 1) return 0;
    double blk = n / p, nc = nchunks(blk, m->chunk), c = blk / nc;
    double rs = (p - 1) * (nc * m->alpha + blk * fmax(m->beta, m->gamma) + c * fmin(m->beta, m->gamma));
    double ag = (p - 1) * (nc * m->alpha + blk * m->beta);
    return rs + ag;
}

/* tree: binary heap (children 2i+1, 2i+2), reduce up then broadcast down,
 * pipelined in S = ceil(n/c) segments of s = n/S bytes over d = floor(log2 p)
 * levels. An interior rank's link serialises its two children's segments:
 *     T = 2(d + S - 1)·(α + 2sβ) + (d + S - 1)·2sγ */
static double tree_cost(const bm_params *m, double d, double n)
{
    double S = nchunks(n, m->chunk), s = n / S, stages = d + S - 1;
    return 2 * stages * (m->alpha + 2 * s * m->beta) + stages * 2 * s * m->gamma;
}
static double cost_tree(const bm_params *m, int p, double n)
{
    return p == 1 ? 0 : tree_cost(m, floor(log2((double)p)), n);
}

/* tree2: two complementary binary trees (NCCL's double binary tree) of
 * d = ceil(log2 p) levels, each reducing and broadcasting half the buffer in
 * S = ceil(n/2c) segments of s bytes: the tree formula on n/2 bytes, which
 * tends to 2nβ + nγ (the ring's bandwidth) with logarithmic latency. */
static double cost_tree2(const bm_params *m, int p, double n)
{
    return p == 1 ? 0 : tree_cost(m, log2i(p), n / 2);
}

/* rd: recursive doubling, log2(p2) rounds exchanging the whole buffer. */
static double cost_rd(const bm_params *m, int p, double n)
{
    if (p == 1) return 0;
    double l = log2i(pow2_floor(p));
    return l * (m->alpha + n * m->beta + n * m->gamma) + fold(m, p, n);
}

/* rabenseifner: recursive-halving reduce-scatter + recursive-doubling
 * all-gather: ring's bandwidth with 2·log2(p2) messages. */
static double cost_rabenseifner(const bm_params *m, int p, double n)
{
    if (p == 1) return 0;
    int q = pow2_floor(p);
    double f = (double)(q - 1) / q;
    return 2 * log2i(q) * m->alpha + 2 * f * n * m->beta + f * n * m->gamma + fold(m, p, n);
}

/* mpi: Open MPI's tuned all-reduce chooses among recursive doubling, ring
 * and Rabenseifner by size; modelled as the best of the three. */
static double cost_mpi(const bm_params *m, int p, double n)
{
    return fmin(cost_rd(m, p, n), fmin(cost_ring(m, p, n), cost_rabenseifner(m, p, n)));
}

static const bm_model table[] = {
    {"naive",          "2(p-1)(α + nβ) + (p-1)nγ",                                cost_naive},
    {"ring",           "2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ",                      cost_ring},
    {"ring_pipelined", "2(p-1)·nc·α + (p-1)/p·n·(β + max(β,γ)) + (p-1)·c·min(β,γ)", cost_ring_pipelined},
    {"tree",           "2(d+S-1)·(α + 2sβ) + (d+S-1)·2sγ",                        cost_tree},
    {"tree2",          "tree on n/2 bytes with d = ceil(log2 p)",                 cost_tree2},
    {"rd",             "log2(p)·(α + nβ + nγ) [+ fold]",                          cost_rd},
    {"rabenseifner",   "2log2(p)α + 2(p-1)/p·nβ + (p-1)/p·nγ [+ fold]",           cost_rabenseifner},
    {"mpi",            "min(rd, ring, rabenseifner)",                             cost_mpi},
};
enum { NMODELS = sizeof table / sizeof table[0] };

int bm_model_count(void) { return NMODELS; }
const bm_model *bm_model_at(int i) { return i >= 0 && i < NMODELS ? &table[i] : NULL; }

const bm_model *bm_model_find(const char *algo)
{
    for (int i = 0; algo && i < NMODELS; i++)
        if (!strcmp(table[i].algo, algo)) return &table[i];
    return NULL;
}

double bm_predict(const char *algo, const bm_params *m, int p, double n)
{
    const bm_model *md = bm_model_find(algo);
    if (!md || p < 1) return NAN;
    return md->cost(m, p, n);
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
 * earlier entry). */
static int best_at(const char *const *algos, int na, const bm_params *m, int p, double n, int cur, double tol)
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

int bm_crossovers(const char *const *algos, int na, const bm_params *m, int p, double n_lo, double n_hi,
                  double tol, double *size, int *from, int *to, int max, int *best_at_lo)
{
    /* Scan a fine geometric grid (8 points per doubling), then bisect each
     * change of winner down to a relative width of 1e-9. */
    const double step = pow(2.0, 1.0 / 8);
    int found = 0, cur = best_at(algos, na, m, p, n_lo, -1, tol);
    if (best_at_lo) *best_at_lo = cur;
    if (cur < 0) return 0;
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
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# collkit alpha-beta-gamma parameters%s%s\n", comment ? ": " : "", comment ? comment : "");
    fprintf(f, "alpha_us %.6g\nbeta_ns_per_byte %.6g\ngamma_ns_per_byte %.6g\nmemcpy_gbs %.6g\nchunk_bytes %.0f\n",
            m->alpha * 1e6, m->beta * 1e9, m->gamma * 1e9, m->memcpy_bw / 1e9, m->chunk);
    return fclose(f) == 0 ? 0 : -1;
}

int bm_params_load(const char *path, bm_params *m, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "cannot open model file '%s'", path); return -1; }
    char line[256], key[64];
    double v;
    int have = 0, lineno = 0;
    bm_params r = {0, 0, 0, 0, 256 * 1024};
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *s = line + strspn(line, " \t");
        if (*s == '#' || *s == '\n' || !*s) continue;
        if (sscanf(s, "%63s %lf", key, &v) != 2 || v < 0) {
            snprintf(err, errlen, "%s:%d: expected 'key value' with a value >= 0", path, lineno);
            fclose(f);
            return -1;
        }
        if (!strcmp(key, "alpha_us")) { r.alpha = v * 1e-6; have |= 1; }
        else if (!strcmp(key, "beta_ns_per_byte")) { r.beta = v * 1e-9; have |= 2; }
        else if (!strcmp(key, "gamma_ns_per_byte")) { r.gamma = v * 1e-9; have |= 4; }
        else if (!strcmp(key, "memcpy_gbs")) r.memcpy_bw = v * 1e9;
        else if (!strcmp(key, "chunk_bytes")) r.chunk = v;
        else {
            snprintf(err, errlen, "%s:%d: unknown key '%s'", path, lineno, key);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    if (have != 7) {
        snprintf(err, errlen, "%s: needs alpha_us, beta_ns_per_byte and gamma_ns_per_byte", path);
        return -1;
    }
    *m = r;
    return 0;
}

void bm_params_print(FILE *out, const char *prefix, const bm_params *m)
{
    fprintf(out, "%salpha = %.3f us, beta = %.4f ns/B (%.2f GB/s), gamma = %.4f ns/B (%.2f GB/s reduce)",
            prefix, m->alpha * 1e6, m->beta * 1e9, m->beta > 0 ? 1e-9 / m->beta : 0,
            m->gamma * 1e9, m->gamma > 0 ? 1e-9 / m->gamma : 0);
    if (m->memcpy_bw > 0) fprintf(out, ", memcpy = %.2f GB/s", m->memcpy_bw / 1e9);
    fprintf(out, "\n");
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
