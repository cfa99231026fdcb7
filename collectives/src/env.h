/*
 * env.h — the library's COLLKIT_* variables, read one way. A value the
 * library cannot use is never taken silently (atof("abc") is 0, which would
 * switch the watchdog off): it is named once per variable and process, from
 * rank 0, with what is used instead, and the run goes on with that:
 *
 *     collkit: COLLKIT_TIMEOUT=abc: expected a number; the watchdog stays at 30 s
 *
 * Private to collectives/src/.
 */
#ifndef COLLKIT_ENV_H
#define COLLKIT_ENV_H

#include <stdint.h>

/* Name var=val once (rank 0 only): "collkit: VAR=VAL: why; instead". */
void ck_env_reject(const char *var, const char *val, const char *why, const char *instead, int rank);

/* The numeric variable var through ck_parse_size / ck_parse_double, in
 * [lo, hi]. 0 with the value in *out; -1 when unset, or set to a value it
 * rejects (named by ck_env_reject, with `instead`), leaving *out alone. */
int ck_env_size(const char *var, uint64_t lo, uint64_t hi, int rank, const char *instead, uint64_t *out);
int ck_env_double(const char *var, double lo, double hi, int rank, const char *instead, double *out);

#endif
