/*
 * collkit_isolate.h — the channel between a graded algorithm's own process
 * and the trusted rank process that carries its messages (COLLKIT_ISOLATE=1,
 * the grader's runs of the checker and the benchmark).
 *
 * The graded file runs in a program of its own, NAME.algo: the file's object
 * and the minimal runtime of collkit_algo.h (collectives/src/isolate_rt.c),
 * nothing else — no MPI, no library algorithm, no checker, no counters or
 * clock anything trusts. The trusted process (plugin/isolate_host.c: the
 * checker, the benchmark, MPI) starts it, one per rank, and registers a proxy
 * for each of its algorithms. A call of the proxy copies the input into a
 * region of shared memory the trusted side made (a memfd, mapped by both),
 * asks the child to run, and serves its requests — post a send or a receive
 * of bytes in the region, wait, mark a step, count traffic — over the real
 * transport, with the real counters and watchdog, until the child says it is
 * done; then it copies the output back. Requests are packets on a
 * SOCK_SEQPACKET socket pair: one cki_msg each, in order, answered where the
 * kind says so.
 */
#ifndef COLLKIT_ISOLATE_H
#define COLLKIT_ISOLATE_H

#include <stdint.h>
#include "collkit.h"

#define CKI_SOCK_FD 3         /* the child's end of the socket pair */
#define CKI_REGION_FD 4       /* the shared region, until the child has mapped it */
#define CKI_MAX_ALGOS 16      /* descriptors one child may register */
#define CKI_MAX_WAIT 256      /* requests one CKI_WAIT names (ck_waitall splits larger sets) */
#define CKI_MAX_REQS 4096     /* requests posted and not yet finished, per child */
#define CKI_TEXT 1024

enum cki_kind {
    /* child -> trusted side, once, when it starts */
    CKI_ALGO = 1,    /* a = mem, b = flags, c = coll, d = CKI_HAS_* bits; text: name, summary,
                        bytes formula, cost formula, file, each ended by '\0' */
    CKI_ALGOS_END,
    /* trusted side -> child; answered by CKI_DONE (RUN) or CKI_REPLY (the others) */
    CKI_RUN,         /* a = rank, b = size, c = dtype, d = op; x: count, send offset, recv offset,
                        mem; f[0] = 1 on a communicator it never ran on, f[1] the input's bytes (0 in
                        place); cfg; text: the transport's name */
    CKI_COUNT,       /* a = p, b = rank, c = CKI_F_*; x: count, esize; cfg */
    CKI_COST,        /* a = p; f: alpha, beta, gamma, chunk; x[0]: n as a double's bits */
    CKI_DIAGNOSE,    /* a = p, b = rank, c = missing, d = doubled; x: count, elem, esize; cfg */
    /* child -> trusted side, during a run */
    CKI_POST,        /* a = is_send, b = peer, c = tag, d = the slot (the child's choice); x: offset,
                        bytes; not answered (a failure fails the next wait, or the call) */
    CKI_WAIT,        /* a = n; slots; answered: a = status, text = the detail */
    CKI_STEP,        /* a = step, b = 1 when a phase is given (text) */
    CKI_TRAFFIC,     /* x: bytes sent, messages sent, bytes received, messages received */
    CKI_DONE,        /* a = status, b = 1 when text holds a ck_fail detail, c = 1 when the
                        scratch was asked for (x[0] bytes; text + CKI_TEXT/2: its guards);
                        x[1], x[2]: the region's offsets of input pages left unwritten */
    CKI_REPLY,       /* x[0] or f[0]: the value; text: a diagnosis */
};

enum { CKI_F_BYTES, CKI_F_MSGS, CKI_F_MAX_MSG, CKI_F_EMPTY, CKI_NUM_COUNT_FNS };
/* CKI_ALGO's d: which members the child's descriptor has */
enum {
    CKI_HAS_RUN = 1 << 0, CKI_HAS_COST = 1 << 1, CKI_HAS_DIAGNOSE = 1 << 2, CKI_HAS_SUMMARY = 1 << 3,
    CKI_HAS_BYTES_FORMULA = 1 << 4, CKI_HAS_COST_FORMULA = 1 << 5,
    CKI_HAS_COUNT = 1 << 8,   /* << CKI_F_*: bytes_sent, msgs_sent, max_msg_bytes, empty_msgs */
};

typedef struct cki_msg {
    int32_t   kind, algo;       /* algo: the index of the descriptor, in the child's order */
    int32_t   a, b, c, d;
    uint64_t  x[4];
    double    f[4];
    ck_config cfg;
    uint32_t  slots[CKI_MAX_WAIT];
    char      text[CKI_TEXT];
} cki_msg;

/* The host's guard bytes of scratch space: the child keeps the same many. */
#define CKI_SCRATCH_GUARD 64

/* The trusted program of an isolated run puts a proxy in a built-in's place
 * (the reference algorithm of a speed part runs isolated too): same name,
 * same collective. CK_ERR_INVALID_ARG when there is no such built-in. */
int ck_replace_algo(const ck_algo *algo);

#endif /* COLLKIT_ISOLATE_H */
