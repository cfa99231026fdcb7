/*
 * results.c — the results file that `collcheck --results` and
 * `collbench --paired --results` write and collverify reads: what every call
 * produced, one line per rank and call, so that the verdict can be computed
 * by a program that never runs the algorithm (collverify.c).
 *
 * The format (text, one record a line, fields separated by one space):
 *
 *   collkit-results 1 TOOL key=value ...       the header: TOOL is collcheck or
 *                                              paired; p, seed, chunk, coll
 *                                              (the collective), ...
 *   call ALGO CASE CALL RANK key=value ...     collcheck: case CASE (0-based,
 *                                              in collcheck's order) call CALL
 *   timed SIZE ITER ALGO RANK key=value ...    paired: timed call ITER of
 *                                              algorithm ALGO (0 = A, 1 = B)
 *                                              at size SIZE (0-based)
 *   values ALGO CASE CALL HEX                  a random-float case's result on
 *                                              rank 0 (the ranks' must be equal)
 *
 * A record's keys: digest (FNV-1a 64 of the result, hex: the rank's whole
 * receive buffer, a reduce-scatter's block r only), status (what the
 * collective returned), local (1: the writing process's own checks
 * failed), bytes, msgs, self_bytes, self_msgs (the part of bytes/msgs the
 * algorithm reported itself with ck_count_traffic), empty, largest, over
 * (0-byte sends, the largest send, sends above the declared largest),
 * decl_bytes, decl_msgs (the descriptor's formulas, "-" when none), ref (1:
 * a reference algorithm, traffic not counted); collcheck's records add the
 * case (count, dtype, op, inplace, misaligned, random), paired ones time
 * (seconds) and count.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "results.h"

static void u64_or_dash(FILE *f, const char *key, uint64_t v)
{
    if (v == UINT64_MAX) fprintf(f, " %s=-", key);
    else fprintf(f, " %s=%llu", key, (unsigned long long)v);
}

void cc_declared_messages(const ck_algo *a, int p, int rank, size_t count, size_t es, const ck_config *cfg,
                          cc_record *r)
{
    r->declared_largest = a->max_msg_bytes ? a->max_msg_bytes(p, rank, count, es, cfg) : UINT64_MAX;
    r->declared_empty = !a->max_msg_bytes ? UINT64_MAX : a->empty_msgs ? a->empty_msgs(p, rank, count, es, cfg) : 0;
}

void cc_results_write_record(FILE *f, const cc_record *r)
{
    fprintf(f, " digest=%016llx status=%d local=%d bytes=%llu msgs=%llu self_bytes=%llu self_msgs=%llu empty=%llu "
               "largest=%llu over=%llu", (unsigned long long)r->digest, r->status, r->local_fail,
            (unsigned long long)r->ctr.bytes_sent, (unsigned long long)r->ctr.msgs_sent,
            (unsigned long long)r->ctr.bytes_sent_self, (unsigned long long)r->ctr.msgs_sent_self,
            (unsigned long long)r->ctr.msgs_empty, (unsigned long long)r->ctr.msg_largest,
            (unsigned long long)r->ctr.msgs_over);
    u64_or_dash(f, "decl_bytes", r->declared_bytes);
    u64_or_dash(f, "decl_msgs", r->declared_msgs);
    u64_or_dash(f, "decl_largest", r->declared_largest);
    u64_or_dash(f, "decl_empty", r->declared_empty);
    fprintf(f, " ref=%d", r->reference);
}

void cc_results_write_values(FILE *f, const void *buf, size_t bytes)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *b = buf;
    fputc(' ', f);
    for (size_t i = 0; i < bytes; i++) {
        fputc(hex[b[i] >> 4], f);
        fputc(hex[b[i] & 15], f);
    }
    if (!bytes) fputc('-', f);
    fputc('\n', f);
}

int cc_results_hex_decode(const char *hex, void *out, size_t bytes)
{
    unsigned char *o = out;
    if (!bytes) return strcmp(hex, "-") ? -1 : 0;
    if (strlen(hex) != 2 * bytes) return -1;
    for (size_t i = 0; i < bytes; i++) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = hex[2 * i + k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0) return -1;
            v = v * 16 + d;
        }
        o[i] = (unsigned char)v;
    }
    return 0;
}

const char *cc_kv_get(char **tok, int ntok, const char *key)
{
    size_t n = strlen(key);
    for (int i = 0; i < ntok; i++)
        if (!strncmp(tok[i], key, n) && tok[i][n] == '=') return tok[i] + n + 1;
    return NULL;
}

int cc_kv_u64(char **tok, int ntok, const char *key, uint64_t *v)
{
    const char *s = cc_kv_get(tok, ntok, key);
    if (!s) return -1;
    if (!strcmp(s, "-")) { *v = UINT64_MAX; return 0; }
    char *end = NULL;
    if (!*s || *s == '-' || *s == '+') return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, !strcmp(key, "digest") ? 16 : 10);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}

int cc_results_parse_record(char **tok, int ntok, cc_record *r)
{
    uint64_t v[11];
    static const char *const keys[11] = {"digest", "status", "local", "bytes", "msgs", "self_bytes", "self_msgs",
                                         "empty", "largest", "over", "ref"};
    for (int k = 0; k < 11; k++)
        if (k != 1 && (cc_kv_u64(tok, ntok, keys[k], &v[k]) || !strcmp(cc_kv_get(tok, ntok, keys[k]), "-")))
            return -1;   /* counted values are numbers (a saturated count is 2^64-1, not "-") */
    /* the status may be any int an algorithm returned, negative ones too */
    const char *st = cc_kv_get(tok, ntok, "status");
    char *end = NULL;
    if (!st || !*st) return -1;
    errno = 0;
    long sv = strtol(st, &end, 10);
    if (errno || *end || sv < -2147483647L || sv > 2147483647L) return -1;
    memset(r, 0, sizeof *r);
    r->digest = v[0];
    r->status = (int)sv;
    r->local_fail = (int)v[2];
    r->ctr.bytes_sent = v[3];
    r->ctr.msgs_sent = v[4];
    r->ctr.bytes_sent_self = v[5];
    r->ctr.msgs_sent_self = v[6];
    r->ctr.msgs_empty = v[7];
    r->ctr.msg_largest = v[8];
    r->ctr.msgs_over = v[9];
    r->reference = (int)v[10];
    if (cc_kv_u64(tok, ntok, "decl_bytes", &r->declared_bytes) || cc_kv_u64(tok, ntok, "decl_msgs", &r->declared_msgs) ||
        cc_kv_u64(tok, ntok, "decl_largest", &r->declared_largest) || cc_kv_u64(tok, ntok, "decl_empty", &r->declared_empty))
        return -1;
    return 0;
}

int cc_results_split(char *line, char **tok, int max)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
        if (n == max) return -1;
        tok[n++] = t;
    }
    return n;
}
