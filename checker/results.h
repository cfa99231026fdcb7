/*
 * results.h — the results file of `collcheck --results` and
 * `collbench --paired --results`, read by collverify (the format is in
 * results.c). Shared by checker/ and bench/; not part of the public API.
 */
#ifndef COLLKIT_RESULTS_H
#define COLLKIT_RESULTS_H

#include <stdio.h>
#include "check_cli.h"

#define CC_RESULTS_MAGIC "collkit-results 1"

/* " digest=... status=... ... ref=R" (no newline): a record's keys. */
void        cc_results_write_record(FILE *f, const cc_record *r);
/* The descriptor's per-message formulas for one rank's call into r:
 * max_msg_bytes, and empty_msgs (0 when only max_msg_bytes is given);
 * UINT64_MAX where the descriptor has no max_msg_bytes. */
void        cc_declared_messages(const ck_algo *a, int p, int rank, size_t count, size_t es, const ck_config *cfg,
                                 cc_record *r);
/* " HEX\n": bytes as lowercase hex ("-" for none). */
void        cc_results_write_values(FILE *f, const void *buf, size_t bytes);
/* The reverse: 0, or -1 when hex is not exactly `bytes` bytes of hex. */
int         cc_results_hex_decode(const char *hex, void *out, size_t bytes);
/* Split a line at spaces in place: the number of tokens, -1 past max. */
int         cc_results_split(char *line, char **tok, int max);
/* key=value tokens: the value of key (NULL when absent); as an unsigned
 * integer ("-" gives UINT64_MAX; digest is hex): 0, or -1 when absent or bad. */
const char *cc_kv_get(char **tok, int ntok, const char *key);
int         cc_kv_u64(char **tok, int ntok, const char *key, uint64_t *v);
/* The record keys of a line's tokens into *r: 0, or -1 when one is missing or bad. */
int         cc_results_parse_record(char **tok, int ntok, cc_record *r);

#endif
