/*
 * env.c — see env.h: the COLLKIT_* variables the library reads, parsed with
 * the tools' own parsers (collkit_util.h), a bad value named once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_util.h"
#include "env.h"

void ck_env_reject(const char *var, const char *val, const char *why, const char *instead, int rank)
{
    /* Once per variable, not per communicator: a program that creates many
     * (the checker, the trainer's buckets) says it once. */
    static const char *said[16];
    static int nsaid;
    for (int i = 0; i < nsaid; i++)
        if (!strcmp(said[i], var)) return;
    if (nsaid < (int)(sizeof said / sizeof said[0])) said[nsaid++] = var;
    if (rank != 0) return;
    fprintf(stderr, "collkit: %s=%s: %s; %s\n", var, val, why, instead);
    fflush(stderr);
}

int ck_env_size(const char *var, uint64_t lo, uint64_t hi, int rank, const char *instead, uint64_t *out)
{
    const char *s = getenv(var);
    char why[128];
    uint64_t v;
    if (!s) return -1;
    if (ck_parse_size(s, hi, &v, why, sizeof why)) {
        ck_env_reject(var, s, why, instead, rank);
        return -1;
    }
    if (v < lo) {
        snprintf(why, sizeof why, "must be at least %llu", (unsigned long long)lo);
        ck_env_reject(var, s, why, instead, rank);
        return -1;
    }
    *out = v;
    return 0;
}

int ck_env_double(const char *var, double lo, double hi, int rank, const char *instead, double *out)
{
    const char *s = getenv(var);
    char why[128];
    double v;
    if (!s) return -1;
    if (ck_parse_double(s, lo, hi, &v, why, sizeof why)) {
        ck_env_reject(var, s, why, instead, rank);
        return -1;
    }
    *out = v;
    return 0;
}
