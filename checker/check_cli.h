/*
 * check_cli.h — the pieces of the collcheck command line, private to checker/:
 *
 *   options.c    the arguments and --help (parsed before MPI_Init)
 *   matrix.c     the list of cases for p ranks
 *   case.c       one case: guarded buffers, the call, the checks
 *   collcheck.c  the driver: algorithms x cases, agreement among ranks, the
 *                report and the exit code
 */
#ifndef COLLKIT_CHECK_CLI_H
#define COLLKIT_CHECK_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "collcheck.h"
#include "collkit_util.h"   /* ck_sbuf */

#define CC_MAX_ALGOS  64
#define CC_MAX_COUNTS 32
#define CC_PRIME      1021
#define CC_BIG        1048577  /* >= 1 Mi, odd: uneven blocks for every p > 1 */

/* One --count entry: an absolute count, or p + v (v may be negative). */
typedef struct {
    int       rel;
    long long v;
} cc_count_spec;

typedef struct {
    const char   *algo_text;      /* --algo as given ("all": default) */
    const ck_algo *algos[CC_MAX_ALGOS];
    int           nalgos;
    cc_count_spec counts[CC_MAX_COUNTS];
    int           ncounts;        /* 0: the default matrix */
    const char   *count_text;     /* --count as given (NULL: default), for messages */
    unsigned      dtypes, ops;    /* bit masks */
    const char   *dtype_text, *op_text;  /* --dtype, --op as given ("all": default), for messages */
    int           inplace;        /* bit 0: out-of-place, bit 1: in-place */
    int           misaligned;     /* 0 off, 1 add misaligned cases, 2 only misaligned */
    double        timeout;        /* --timeout; < 0: not given (the library's default) */
    size_t        chunk;
    int           quick, verbose;
    unsigned      mem;
    const char   *transport;      /* --transport as given (NULL: not given) */
    int           repeat;         /* calls per case (default 2) */
    int           repeat_given;   /* --repeat was given: every failure names its call */
    int           inputs;         /* bit 0: exact integer inputs, bit 1: random floats */
    uint64_t      seed;           /* --seed (0: the default inputs) */
    const char   *results;        /* --results FILE: what every call produced, for collverify (NULL: none) */
    int           overwrite;      /* --overwrite: an existing --results file may be written over */
    int           require_msgs;   /* --require-msgs: a descriptor without msgs_sent fails */
    int           leaks;          /* --leaks: heap growth between a case's calls fails the call */
    ck_coll       coll;           /* --coll: the collective checked (default all-reduce) */
} cc_options;

/* What one rank's call produced, as --results writes it and collverify
 * reads it (results.c): the digest of its result and the traffic counted. */
typedef struct {
    uint64_t digest;              /* FNV-1a 64 of the result's bytes */
    int      status;              /* what ck_allreduce returned */
    int      local_fail;          /* the in-process checks (guards, send buffer, ...) failed */
    ck_counters ctr;              /* counted during the call */
    uint64_t declared_bytes, declared_msgs;  /* the descriptor's formulas; UINT64_MAX: none */
    uint64_t declared_largest, declared_empty;  /* max_msg_bytes, empty_msgs; UINT64_MAX: none */
    int      reference;           /* CK_ALGO_REFERENCE: traffic not counted */
} cc_record;

typedef struct {
    size_t   count;
    ck_dtype dt;
    ck_op    op;
    int      inplace, misaligned;
    int      random;              /* random-float inputs (sum/avg on f32, f64, bf16) */
    ck_coll  coll;                /* the collective the case calls */
} cc_case;

/* What one rank reports about one call of one case (gathered to rank 0 on
 * failure, so a plain struct of fixed size). */
typedef struct {
    int      fail, status, poisoned;
    unsigned call;                /* 0-based call of the case (the inputs' salt or seed) */
    uint64_t hash;                /* of the result (FNV-1a), for the cross-rank comparison and the
                                     probe's comparison of repeats */
    cc_record rec;                /* what the call produced, for --results */
    char     claim[128];           /* what the failure shows, in a few words (the pattern summary) */
    int      step;                /* the step the rank last announced in the call (ck_step); -1 none */
    char     phase[32];           /* that step's phase */
    char     msg[1500];
} cc_result;

/* One case of one algorithm, for the pattern summary (pattern.c): whether it
 * failed, and what the same call did when repeated with the same inputs. */
enum { CC_PROBE_NONE, CC_PROBE_SAME, CC_PROBE_DIFFERS, CC_PROBE_FIRST_ONLY, CC_PROBE_STATE };
typedef struct {
    cc_case  cs;
    int      failed, probe;       /* probe: CC_PROBE_* */
    unsigned call;                /* the failed call (0-based): later calls only, when the first passed */
    char     claim[128];           /* the failing rank's cc_result.claim */
} cc_outcome;
/* What the failed cases among o[0..n) have in common, in words, into out;
 * returns how many things it found to say (0: nothing). */
int  cc_pattern(char *out, size_t cap, const cc_outcome *o, int n, int p);
/* A hang among all[0..p) (one rank's watchdog fired, `who` speaks): where
 * the ranks' schedules diverged, into out, and in a few words into claim;
 * returns 0 when no rank's wait could be read. (schedule.c) */
int  cc_schedules(char *out, size_t cap, char *claim, size_t ccap, const cc_result *all, int p, int who);

/* Every rank parses the same argv; with quiet set (not the print rank)
 * nothing is printed. Returns -1 to go on, or the exit code (0 after --help
 * or --algo list, 2 for a bad argument). */
int  cc_parse_args(int argc, char **argv, cc_options *o, int quiet);
/* "PROG: ERR" on f for an option table's refusal (ck_opt_parse's err): a
 * value it refused reads "PROG: bad --x 'v': why", or "bad --x 'v' (want
 * ...)" when the reason is in parentheses. */
void cc_say_bad(FILE *f, const char *prog, const char *err);

/* The cases for p ranks in *out (malloc'd). Returns how many (0 is possible:
 * every --count below zero at this p), or -1 when out of memory. */
int  cc_build_matrix(const cc_options *o, int p, cc_case **out);

/* Run call `call` (0, 1, ...) of one case on this rank and check it: result,
 * guards, send buffer, protocol, traffic and message count. Every rank must
 * call it (it is collective). With keep (count elements), the result is
 * copied there for the driver's cross-rank comparison. */
void cc_run_case(ck_comm *comm, const ck_algo *algo, const cc_case *cs, unsigned call, cc_result *res,
                 void *keep);
/* The traffic of one call (count elements of es bytes) on this rank against
 * the descriptor's formulas: bytes, messages (where declared) and, where it
 * declares its largest message, the per-message checks. Appends a clause to m
 * for each difference; nothing for a reference algorithm. */
void cc_check_traffic(const ck_algo *algo, const ck_counters *ctr, int p, int rank, size_t count, size_t es,
                      const ck_config *cfg, ck_sbuf *m);
/* cc_run_case keeps its buffers from call to call: free them, before the
 * communicator they were allocated on is destroyed. */
void cc_release_buffers(void);

#endif /* COLLKIT_CHECK_CLI_H */
