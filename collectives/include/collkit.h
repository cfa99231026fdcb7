/*
 * collkit.h — the public header of the collkit collectives library, for the
 * programs that USE all-reduce: the checker, the benchmark, the trainer, labs.
 *
 *   ck_comm        a communicator over an MPI communicator, with a transport
 *                  (MPI or shared memory for host buffers, CUDA IPC for
 *                  device buffers)
 *   ck_algo        the registry: every algorithm by name, with everything
 *                  collkit knows about it (bytes and messages it sends, its
 *                  alpha-beta-gamma cost, how to read a wrong result)
 *   ck_allreduce   run one algorithm on one communicator
 *
 * Algorithm files include collkit_algo.h instead, which adds what an
 * algorithm may call: the point-to-point layer (ck_isend, ck_irecv, ck_wait,
 * ck_sendrecv, ck_reduce_local, ck_copy, ck_scratch, ck_step) and per-
 * communicator state. An algorithm never calls MPI or CUDA for data movement,
 * which is what lets one ring.c run on every transport, with byte counting,
 * tracing and the hang watchdog for free.
 *
 * Conventions
 *   - counts are in elements, sizes in bytes;
 *   - every function that can fail returns an int status (CK_SUCCESS == 0);
 *     ck_strerror() names it and ck_comm_errmsg() gives the detail of the last
 *     failure on that communicator ("count differs across ranks: ...");
 *   - in-place: pass CK_IN_PLACE (or recvbuf itself) as sendbuf.
 */
#ifndef COLLKIT_H
#define COLLKIT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ status */

enum {
    CK_SUCCESS = 0,
    CK_ERR_INVALID_ARG,   /* bad argument on this rank (null buffer, unknown dtype, avg on ints, ...) */
    CK_ERR_UNSUPPORTED,   /* valid, but this algorithm/transport cannot do it (e.g. host-only algo on device buffers) */
    CK_ERR_MISMATCH,      /* arguments differ across ranks (count, dtype, op or algorithm) */
    CK_ERR_TIMEOUT,       /* the watchdog fired: a wait exceeded the communicator's timeout */
    CK_ERR_TRANSPORT,     /* the transport (MPI, CUDA) reported an error */
    CK_ERR_NOMEM,         /* allocation failed */
    CK_ERR_INTERNAL,      /* a collkit bug: please report it */
    CK_ERR_PROTOCOL,      /* the algorithm broke the rules of the algorithm interface
                             (collkit_algo.h): a request left posted when it returned, a
                             receive whose size differs from the message's, a write outside
                             the ck_scratch space it asked for (host memory) */
    CK_NUM_ERRORS
};
const char *ck_strerror(int status);

/* ------------------------------------------------------------ dtypes, ops */

typedef enum { CK_F32 = 0, CK_F64, CK_I32, CK_I64, CK_BF16, CK_NUM_DTYPES } ck_dtype;
typedef enum { CK_SUM = 0, CK_PROD, CK_MIN, CK_MAX, CK_AVG, CK_NUM_OPS } ck_op;

size_t      ck_dtype_size(ck_dtype dt);        /* 0 for an invalid dtype */
const char *ck_dtype_name(ck_dtype dt);        /* "f32", "f64", "i32", "i64", "bf16" */
const char *ck_op_name(ck_op op);              /* "sum", "prod", "min", "max", "avg" */
int         ck_dtype_parse(const char *s, ck_dtype *out);   /* accepts the names above and "float","double","int32","int64" */
int         ck_op_parse(const char *s, ck_op *out);
int         ck_dtype_is_float(ck_dtype dt);    /* f32, f64, bf16: the types `avg` is defined for */

/* bf16 helpers (host): round-to-nearest-even conversion. */
uint16_t ck_f32_to_bf16(float x);
float    ck_bf16_to_f32(uint16_t x);

/* Host reduce kernel: dst[i] = a[i] op b[i] for i < count. dst may alias a or b.
 * op must not be CK_AVG (avg is sum followed by one division, see ck_allreduce). */
int ck_reduce_host(void *dst, const void *a, const void *b, size_t count, ck_dtype dt, ck_op op);
/* Host avg finaliser: buf[i] = buf[i] / divisor, one IEEE division per element. */
int ck_divide_host(void *buf, size_t count, ck_dtype dt, int divisor);

/* -------------------------------------------------------- partitioning
 * Every algorithm that cuts a buffer into p blocks (ring, rabenseifner, ...)
 * uses this one rule, so the checker and the traffic formulas agree with it:
 * block i has count/p elements, and the first count%p blocks get one more.
 * Blocks may be empty when count < p. */
void ck_block(size_t count, size_t nblocks, size_t i, size_t *offset, size_t *len);
/* The same rule cuts a block into chunks (ring_pipelined, the trees):
 * chunk k of nc over len elements is ck_block(len, nc, k, ...). */
/* Number of chunks of at most `chunk` elements that cover `len` (0 for len 0). */
size_t ck_num_chunks(size_t len, size_t chunk);

/* ------------------------------------------------------------ memory kinds */

/* CK_MEM_HOST  host memory, moved by MPI (the mpi transport).
 * CK_MEM_CUDA  device memory, moved by CUDA IPC copies (the cuda-ipc transport).
 * CK_MEM_SHM   host memory that the ranks of one node map into each other
 *              (the shm transport): ck_alloc returns memory every peer can
 *              load from, and point-to-point messages are copied through
 *              shared staging slots instead of going through MPI. Buffers are
 *              still host buffers, so a shm communicator's memory is
 *              CK_MEM_HOST | CK_MEM_SHM: every host algorithm runs on it
 *              unchanged, and so do the algorithms that load straight from
 *              their peers' memory (oneshot, twoshot: memory "shm"). */
enum { CK_MEM_HOST = 1u << 0, CK_MEM_CUDA = 1u << 1, CK_MEM_SHM = 1u << 2 };

/* ------------------------------------------------------------ communicator */

typedef struct ck_comm ck_comm;

/* The defaults come from the environment where one is set (COLLKIT_CHUNK,
 * COLLKIT_TIMEOUT, COLLKIT_WAIT); a value the library cannot use keeps the
 * default and is named once, by rank 0, on stderr. */
typedef struct ck_config {
    size_t chunk_bytes;   /* pipeline chunk/segment for ring_pipelined and tree (default 256 KiB; env COLLKIT_CHUNK, e.g. 64K) */
    double timeout_s;     /* watchdog bound for any single wait (default 30 s; env COLLKIT_TIMEOUT, seconds up to 1e6; <= 0: off) */
    int    validate;      /* 1: check count/dtype/op/algo agree across ranks on every call (default 1) */
    int    yield_wait;    /* 1: a wait gives the core away (sched_yield) after its first 64 polls; 0: it
                           * polls (default; env COLLKIT_WAIT=yield|spin). Measured on 2 cores with 4 ranks,
                           * yielding was slower, not faster: labs/03-latency, part D */
} ck_config;

/* Create a communicator over the ranks of `mpi_comm` (which is duplicated).
 * mem selects the transport: CK_MEM_HOST -> MPI transport (host buffers),
 * CK_MEM_SHM (or CK_MEM_HOST | CK_MEM_SHM) -> shared-memory transport (host
 * buffers, every rank on one node; ranks on several nodes get the mixed
 * transport: shm inside each node, MPI between nodes, memory kind
 * CK_MEM_HOST, where oneshot and twoshot run as ring; too little shared
 * memory for the staging slots, or every rank a node of its own, falls back
 * to the MPI transport; each said once on stderr: ck_comm_transport_name
 * says which one you got, "shm", "mixed" or "mpi"; docs/hier.md),
 * CK_MEM_CUDA -> CUDA IPC transport (device buffers; CK_ERR_UNSUPPORTED when
 * collkit was built without CUDA or no device is present). Every kind finds
 * the nodes first (collkit_group.h: ck_comm_topo; COLLKIT_RANKS_PER_NODE
 * emulates them, and a value the ranks refuse fails the call with
 * CK_ERR_INVALID_ARG, the reason on stderr). Collective, and bounded by the
 * watchdog (a rank that never comes ends the job, named). */
int  ck_comm_create(MPI_Comm mpi_comm, unsigned mem, ck_comm **out);
void ck_comm_destroy(ck_comm *comm);           /* collective; NULL is fine */

/* The CUDA devices this process can use (CUDA_VISIBLE_DEVICES honoured), as
 * the CUDA transport would count them; not collective, no MPI needed.
 * CK_SUCCESS with *ndev >= 1; CK_ERR_UNSUPPORTED when there is none (built
 * without CUDA, no driver, no device); CK_ERR_TRANSPORT when a device is
 * there and does not work (CUDA's message in why). */
int ck_gpu_count(int *ndev, char *why, size_t whylen);

int         ck_comm_rank(const ck_comm *comm);
int         ck_comm_size(const ck_comm *comm);
unsigned    ck_comm_mem(const ck_comm *comm);              /* CK_MEM_HOST, CK_MEM_HOST | CK_MEM_SHM, or CK_MEM_CUDA */
const char *ck_comm_transport_name(const ck_comm *comm);   /* "mpi", "shm", "mixed", "cuda-ipc" */
MPI_Comm    ck_comm_mpi(const ck_comm *comm);              /* the private duplicate; for reference algorithms and tools */
/* The settings, to read: a copy, refreshed on every call, so that writing
 * through it (a cast away from const) changes nothing. Programs and tools
 * change them with ck_comm_set_config, collectively (the same values on every
 * rank; CK_ERR_INVALID_ARG for a chunk of 0 B or a timeout that is not a
 * number); an algorithm only reads them. */
const ck_config *ck_comm_config(ck_comm *comm);
int         ck_comm_set_config(ck_comm *comm, const ck_config *cfg);
const char *ck_comm_errmsg(const ck_comm *comm);           /* detail of the last failure, "" if none */

/* Buffers of the communicator's memory kind (host: 64-byte aligned malloc;
 * shm: 64-byte aligned, from this rank's shared heap, which the peers map —
 * plain host memory when the heap is full; cuda: cudaMalloc). Data moves
 * between them and host memory with ck_upload/ck_download (plain memcpy on
 * the host transports). */
void *ck_alloc(ck_comm *comm, size_t bytes);
void  ck_free(ck_comm *comm, void *ptr);
int   ck_upload(ck_comm *comm, void *dst, const void *host_src, size_t bytes);
int   ck_download(ck_comm *comm, void *host_dst, const void *src, size_t bytes);
/* Wait until every operation queued on the communicator's transport has
 * finished: a no-op on the MPI transport (its operations complete in ck_wait),
 * a stream synchronisation on CUDA, where "complete" means "queued in stream
 * order". ck_allreduce does this itself; timing code around point-to-point
 * calls (ping-pong, kernels) needs it. Device buffers written by the caller on
 * another CUDA stream must be synchronised before ck_allreduce or ck_isend is
 * called: the transport orders its work on its own stream only. The wait is
 * bounded by config.timeout_s like any other (CK_ERR_TIMEOUT). */
int   ck_sync(ck_comm *comm);

/* ------------------------------------------------------------ the collectives */

/* The collectives collkit implements, each with its own registry of
 * algorithms written against the same point-to-point interface. All three cut
 * the buffer into p blocks by ck_block; rank r owns block r.
 *   CK_COLL_ALLREDUCE       every rank gets the whole reduction (ck_allreduce)
 *   CK_COLL_REDUCE_SCATTER  rank r gets block r of the reduction (ck_reduce_scatter)
 *   CK_COLL_ALLGATHER       every rank gets every rank's block (ck_allgather)
 * An all-reduce is a reduce-scatter followed by an all-gather: that split is
 * what sharded (ZeRO) training is built on. */
typedef enum { CK_COLL_ALLREDUCE = 0, CK_COLL_REDUCE_SCATTER, CK_COLL_ALLGATHER, CK_NUM_COLLS } ck_coll;
const char *ck_coll_name(ck_coll coll);               /* "allreduce", "reduce_scatter", "allgather" */
int         ck_coll_parse(const char *s, ck_coll *out);  /* those names; CK_ERR_INVALID_ARG otherwise */

/* ------------------------------------------------------------ the registry */

typedef struct ck_algo ck_algo;

/* An algorithm's body. Called by ck_allreduce (ck_reduce_scatter,
 * ck_allgather) after validation with count > 0 (the elements of the WHOLE
 * buffer, every block together), op != CK_AVG (avg runs as sum, then the
 * library divides once), buffers of the communicator's memory kind. It
 * returns a status (pass on what ck_wait & co. return). By collective
 * (ck_algo.coll), with (off, len) = ck_block(count, p, rank):
 *   all-reduce      sendbuf and recvbuf hold count elements (sendbuf ==
 *                   recvbuf in place); leave the full result in recvbuf.
 *   reduce-scatter  sendbuf holds count elements, recvbuf len: leave block
 *                   `rank` of the reduction there. In place recvbuf is
 *                   sendbuf + off: it aliases this rank's own input block,
 *                   and the rest of the buffer is the body's to overwrite
 *                   (partial sums need no scratch of their own).
 *   all-gather      sendbuf holds this rank's len elements, recvbuf count:
 *                   leave every rank's block at its offset. In place sendbuf
 *                   is recvbuf + off (already where it belongs); op is
 *                   CK_SUM and means nothing.
 * Outside those aliases a body never writes sendbuf. */
typedef int (*ck_allreduce_fn)(ck_comm *comm, const void *sendbuf, void *recvbuf,
                               size_t count, ck_dtype dt, ck_op op);

/* Bytes (or messages) rank `rank` of p sends in one all-reduce of `count`
 * elements of `esize` bytes, exactly as the algorithm does it (uneven blocks,
 * folds, chunking and 0-byte messages included). The checker compares these
 * against the point-to-point layer's counters. */
typedef uint64_t (*ck_count_fn)(int p, int rank, size_t count, size_t esize, const ck_config *cfg);

/* The alpha-beta-gamma model (Hockney; Thakur, Rabenseifner & Gropp 2005):
 * a message of m bytes costs alpha + m*beta, reducing m bytes costs m*gamma.
 * collbench fits alpha and beta with a ping-pong and measures gamma. */
typedef struct ck_cost_params {
    double alpha;    /* s per message */
    double beta;     /* s per byte sent (1/beta is the link bandwidth) */
    double gamma;    /* s per byte reduced */
    double chunk;    /* pipeline chunk in bytes (ck_config.chunk_bytes) */
} ck_cost_params;
/* Predicted seconds for an all-reduce of n bytes on p ranks (0 at p = 1). */
typedef double (*ck_cost_fn)(const ck_cost_params *m, int p, double n);

/* A wrong element, as the checker decoded it, for an algorithm's diagnosis
 * hook to place in its schedule. */
typedef struct ck_fault {
    int    p, rank;       /* ranks; the rank whose recvbuf holds the wrong element */
    size_t count, elem;   /* elements in the call; the wrong element */
    size_t esize;         /* bytes per element */
    int    missing;       /* a rank whose contribution the wrong value lacks, or -1 */
    int    doubled;       /* a rank whose contribution it holds twice, or -1 */
    const ck_config *cfg; /* the communicator's configuration (chunk size) */
} ck_fault;
/* Say where in the schedule the fault points: which step, block, chunk or
 * peer handles that element for that rank. Writes a phrase that completes
 * "in ALGO, ..." (e.g. "rank 2 adds its input to block 1 at reduce-scatter
 * step 0"), or nothing when it has nothing to add. */
typedef void (*ck_diagnose_fn)(const ck_fault *f, char *out, size_t cap);

enum {
    CK_ALGO_REFERENCE = 1u << 0,  /* a library's own collective (MPI_Allreduce, NCCL): bypasses the
                                     point-to-point layer, so no traffic count or trace; collbench
                                     takes its ratios against the first reference it runs */
};

/* Everything collkit knows about an algorithm, in the one place it is
 * defined: the end of its algorithm file. The checker, the benchmark, the
 * trainer and the labs read it from here and nowhere else. */
struct ck_algo {
    const char     *name;          /* what --algo takes: 1 to 63 letters, digits, _ . -; not all, list, auto */
    const char     *summary;       /* one line for --algo list */
    unsigned        mem;           /* CK_MEM_* kinds it runs on */
    unsigned        flags;         /* CK_ALGO_* */
    const char     *bytes_formula; /* per-rank bytes sent, for humans: "2(p-1)/p * n" (n = bytes) */
    ck_count_fn     bytes_sent;    /* the same, exactly (checker: traffic); NULL for references */
    ck_count_fn     msgs_sent;     /* messages sent, exactly (checker: message count); NULL: not checked */
    const char     *cost_formula;  /* the alpha-beta-gamma cost, for humans */
    ck_cost_fn      cost;          /* the same (collbench: model column, crossovers); NULL: no model */
    ck_diagnose_fn  diagnose;      /* optional: place a wrong element in the schedule (checker) */
    ck_allreduce_fn run;
    /* Per-message checks (optional; the checker applies them when max_msg_bytes is given): */
    ck_count_fn     max_msg_bytes; /* the largest message rank sends (a pipelined algorithm: its chunk);
                                      a larger one fails the call ("lumped") */
    ck_count_fn     empty_msgs;    /* its 0-byte messages, exactly (NULL with max_msg_bytes: none); more
                                      fail the call ("padded": empty messages that make up a count) */
    ck_coll         coll;          /* the collective it implements: its registry (0: all-reduce) */
};

/* Built-in algorithms are listed in collectives/algos/algos.def (all-reduce),
 * reduce_scatter.def and allgather.def. Programs that carry their own (labs,
 * tests) add them at run time, before use; algo->coll picks the registry, and
 * names are unique within one. The functions without "coll" in their name
 * are the all-reduce registry's. */
int            ck_register_algo(const ck_algo *algo);   /* CK_ERR_INVALID_ARG on a duplicate name */
const ck_algo *ck_algo_find(const char *name);           /* NULL if unknown */
int            ck_algo_count(void);
const ck_algo *ck_algo_at(int i);
/* Print the registry as a table (name, memory kinds, bytes formula, summary). */
void           ck_algo_print_table(FILE *out);
/* Parse "a,b,c" or "all" into algorithms that support `mem`; *n receives the
 * number found (at most max). Prints nothing: on an unknown name, a name of
 * the wrong memory kind, a name given twice, too many, or none, returns
 * CK_ERR_INVALID_ARG with the whole message in err (for an unknown name it
 * ends with the names that run on `mem`), for the caller to print once. */
int            ck_algo_parse_list(const char *spec, unsigned mem, const ck_algo **out, int max, int *n,
                                  char *err, size_t errlen);
/* The same for the registry of one collective. */
const ck_algo *ck_coll_algo_find(ck_coll coll, const char *name);
int            ck_coll_algo_count(ck_coll coll);
const ck_algo *ck_coll_algo_at(ck_coll coll, int i);
void           ck_coll_algo_print_table(ck_coll coll, FILE *out);
int            ck_coll_algo_parse_list(ck_coll coll, const char *spec, unsigned mem, const ck_algo **out, int max,
                                       int *n, char *err, size_t errlen);

/* --algo auto: the all-reduce to run `bytes` (0: not known; taken as large)
 * on this communicator, chosen from its transport and its nodes
 * (collkit_group.h: ck_comm_topo), with one line saying why in `why`. Local;
 * every rank of a communicator gets the same answer for the same bytes.
 *   one node        twoshot on the shm transport (the ranks map each other's
 *                   memory), else ring
 *   N nodes of L    hier.ring.rd where a shard (bytes / L) is under 64 KiB
 *   ranks (L > 1)   (latency across nodes), else hier.ring.rabenseifner
 *   one rank a      rd under 64 KiB, else rabenseifner: the network's α
 *   node, uneven    makes the ring's 2(p-1) steps the dearest
 *   SimGrid SMPI    ring (every simulated rank is a host of its own) */
const ck_algo *ck_algo_auto(ck_comm *comm, size_t bytes, char *why, size_t cap);

/* ------------------------------------------------------------ all-reduce */

#define CK_IN_PLACE ((const void *)1)

/* recvbuf[i] = op over ranks r of sendbuf_r[i], on every rank.
 * avg (floating types only) is defined as the exact-order-independent sum
 * followed by one division by p in the element type.
 * Device buffers (CUDA communicator): the call orders its work on the
 * transport's own stream, so input written on another stream (a compute
 * stream, a library's) must be complete first — cudaStreamSynchronize it, or
 * have the host wait on an event recorded after the writes. When the call
 * returns, the result is in recvbuf and the stream is idle. */
int ck_allreduce(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                 size_t count, ck_dtype dt, ck_op op);

/* Reduce-scatter: rank r's recvbuf (ck_block(count, p, r): len elements at
 * offset off) gets block r of the reduction of every rank's sendbuf (count
 * elements). count is the whole buffer's, the same on every rank. In place
 * (sendbuf CK_IN_PLACE or recvbuf), recvbuf holds count elements and the
 * result is left in its block r (recvbuf + off); the other blocks are left
 * undefined. avg: sum, then one division of the block. */
int ck_reduce_scatter(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                      size_t count, ck_dtype dt, ck_op op);
/* All-gather: every rank's recvbuf (count elements) gets every rank's block,
 * rank q's len_q elements at its offset (ck_block(count, p, q)); sendbuf
 * holds this rank's len elements. In place (sendbuf CK_IN_PLACE or recvbuf),
 * this rank's block is already at its offset in recvbuf. */
int ck_allgather(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                 size_t count, ck_dtype dt);

/* Nonblocking all-reduce on a progress thread: the same registry algorithm
 * runs on a private clone of `comm`, in the order the calls were made.
 * Used for DDP-style bucketed gradient all-reduce that overlaps backward.
 * Buffers must stay untouched until ck_allreduce_wait returns. */
typedef struct ck_async ck_async;
int ck_allreduce_async(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op, ck_async **handle);
int ck_allreduce_wait(ck_async *handle);   /* frees the handle; returns the all-reduce's status */
/* The same, and when the progress thread ran it: *started and *finished (either
 * may be NULL) get the ck_now() times around the all-reduce, for a timeline of
 * buckets overlapping backward (tagtrain --trace). */
int ck_allreduce_wait_timed(ck_async *handle, double *started, double *finished);
/* The halves, nonblocking, on the same progress thread and queue (calls of
 * any of the three run in the order they were made): ck_reduce_scatter and
 * ck_allgather as above, their buffers untouched until the wait. Their
 * handles are waited for with ck_allreduce_wait or ck_allreduce_wait_timed,
 * which wait for any asynchronous collective; the wait adds what the call
 * moved to the communicator's counters (ck_counters_get). */
int ck_reduce_scatter_async(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                            size_t count, ck_dtype dt, ck_op op, ck_async **handle);
int ck_allgather_async(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_async **handle);

/* -------------------------------------------------- counters and trace */

/* What this rank moved since the last reset. The totals (bytes_*, msgs_*)
 * are what the transport carried plus what the algorithm reported itself with
 * ck_count_traffic; the *_self fields say how much of each total came from
 * ck_count_traffic, which adds to them and can never lower or replace what
 * the transport counted (its additions saturate instead of wrapping). The
 * per-message fields count the transport's own sends only. */
typedef struct ck_counters {
    uint64_t bytes_sent, bytes_recv;
    uint64_t msgs_sent, msgs_recv;
    uint64_t elems_reduced;
    uint64_t bytes_sent_self, msgs_sent_self;   /* of the totals: reported with ck_count_traffic */
    uint64_t bytes_recv_self, msgs_recv_self;
    uint64_t msgs_empty;      /* sends of 0 bytes */
    uint64_t msg_largest;     /* the largest send, in bytes */
    uint64_t msgs_over;       /* sends above the call's max_msg_bytes (0 when the algorithm declares none) */
} ck_counters;
void ck_counters_get(const ck_comm *comm, ck_counters *out);
void ck_counters_reset(ck_comm *comm);

enum { CK_EV_SEND = 1, CK_EV_RECV, CK_EV_REDUCE, CK_EV_COPY, CK_EV_WAIT, CK_EV_CALL };
typedef struct ck_event {
    int         kind;      /* CK_EV_* */
    int         peer;      /* -1 when none */
    int         step;
    const char *phase;     /* static string or NULL */
    uint64_t    bytes;
    double      t0, t1;    /* seconds, ck_now() clock */
} ck_event;
/* Start recording up to `capacity` events (0 stops and frees). Events past
 * capacity are counted as dropped, never reallocated mid-run. */
int             ck_trace_enable(ck_comm *comm, size_t capacity);
const ck_event *ck_trace_events(const ck_comm *comm, size_t *n, size_t *dropped);
void            ck_trace_clear(ck_comm *comm);
const char     *ck_event_kind_name(int kind);

double ck_now(void);   /* monotonic seconds */
/* Every rank's ck_now() offset to rank 0's (off[r] = rank r's clock minus rank
 * 0's at the same instant), estimated with a few ping-pongs per rank, so that
 * the times several ranks recorded (traces) line up, on one node or several.
 * Collective over comm; off (comm's size entries) is filled on rank 0 only. */
void   ck_clock_offsets(MPI_Comm comm, double *off);

/* Watching an algorithm run, for tools that draw it (colldraw). While
 * ck_allreduce (ck_reduce_scatter, ck_allgather) runs the algorithm, `step` is called on every ck_step, before
 * that step's work (so the buffers then show what the earlier steps left), and
 * `message` on every point-to-point post (kind CK_EV_SEND or CK_EV_RECV) with
 * the buffer it names. A NULL callback is skipped; ck_observe(comm, NULL)
 * stops watching. */
typedef struct ck_observer {
    void (*step)(void *ctx, int step, const char *phase);
    void (*message)(void *ctx, int kind, const void *buf, size_t bytes, int peer, int step);
    void *ctx;
    /* Symmetric (shared-memory) algorithms, which post no messages: `shared`
     * is called on ck_show_shared (memory of this rank's that its peers load
     * from, named), `load` on ck_show_load (this rank loaded bytes from a
     * peer's region `from` into buf, which is its own buffer or region). */
    void (*shared)(void *ctx, const char *name, const void *buf, size_t bytes);
    void (*load)(void *ctx, int peer, const char *from, const void *buf, size_t bytes, int step);
} ck_observer;
void ck_observe(ck_comm *comm, const ck_observer *obs);

/* ------------------------------------------------------------ before algorithm code, for tools */

/* A program's hook, run once per process right before the first algorithm
 * code runs: every collective calls ck_before_algorithms first, and a tool
 * that runs an algorithm's own code without a collective before (collbench
 * --extrapolate: the cost functions) calls it itself. The grader's program
 * (plugin/, which collkit-cc builds around a student's file) registers its
 * confinement there (plugin/confine.c, COLLKIT_CONFINE). Without a hook,
 * nothing. Set the hook before the first collective. */
void ck_set_before_algorithms(void (*hook)(void));
void ck_before_algorithms(void);

/* ------------------------------------------------------------ agreement, for tools */

/* The ranks of one job must run one computation: a tool whose every rank
 * parses its own command line, reads its own files or loads its own state
 * checks that they agree before it communicates, so that a difference is an
 * error that says so, not a hang, a crash inside MPI or a wrong result blamed
 * on an algorithm. Both are collective over `comm`. */

/* The first rank whose `digest` differs from rank 0's, or -1 when all agree
 * (every rank gets the answer). */
int ck_first_differing_rank(MPI_Comm comm, uint64_t digest);
/* CK_SUCCESS when every rank was given the same argv[1..argc); else
 * CK_ERR_MISMATCH on every rank, after rank 0 printed "PROG: the ranks were
 * given different command lines" with its own and the first differing
 * rank's (an MPMD launch, or a wrapper that adds an option on some nodes). */
int ck_same_command_line(MPI_Comm comm, int argc, char **argv, const char *prog);
/* CK_SUCCESS when every node has the memory for `bytes` per rank times its
 * ranks (MemAvailable, and a cgroup's limit); else CK_ERR_NOMEM on every
 * rank, after the first rank short of it printed "PROG: not enough memory
 * for WHAT: ..." with the figures. Asked before a tool allocates, so that a
 * size too large is an error that says so, not the kernel's OOM kill
 * minutes later. Collective over `comm`. */
int ck_memory_fits(MPI_Comm comm, uint64_t bytes, const char *prog, const char *what);

/* ------------------------------------------------------------ bounded waits, for programs */

/* Every wait of a collkit program is bounded: the all-reduce's by the
 * communicator's watchdog, the program's own collectives (a barrier, the
 * broadcast of a verdict, the sum of the losses) by these. When a wait passes
 * the bound (COLLKIT_TIMEOUT, default 30 s; <= 0: off), the rank asks every
 * other rank where it is (a roll call over a private duplicate of
 * MPI_COMM_WORLD, in the bound's last fifth, at most 2 s) and ends the job
 * (MPI_Abort) with one line naming the ranks that did not answer and the phase:
 *
 *     tagtrain: watchdog: rank 0 waited 5.0 s for the other ranks in train
 *     (epoch start): rank 2 did not answer (stopped, stalled or gone); waiting:
 *     rank 1 in train (epoch start); ending the job
 *
 * A rank answers while it waits in any of these, in ck_allreduce or in the
 * shm transport; a rank that is stopped, computing past the bound or gone
 * does not. When every rank answers (all alive, each in a wait of its own,
 * which is bounded too), the wait goes on for one bound more before it ends
 * the job as a deadlock: at most two bounds in all. */

/* Collective over MPI_COMM_WORLD, right after MPI_Init: the program's name
 * for the messages, COLLKIT_TIMEOUT read, the roll-call communicator made. */
int    ck_watch_init(const char *prog);
/* The phase this rank is in ("load", "train", "save"), named in messages. */
void   ck_watch_phase(const char *phase);
double ck_watch_timeout(void);
void   ck_watch_set_timeout(double seconds);   /* a program's --timeout */
/* The bounded collectives: as MPI's, the job ended when the bound passes. */
void ck_watch_barrier(MPI_Comm comm, const char *what);
void ck_watch_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, const char *what);
void ck_watch_allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm, const char *what);
void ck_watch_reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                     const char *what);
void ck_watch_gather(const void *s, int n, MPI_Datatype st, void *r, int m, MPI_Datatype rt, int root, MPI_Comm comm,
                     const char *what);
void ck_watch_gatherv(const void *s, int n, MPI_Datatype st, void *r, const int *counts, const int *displs,
                      MPI_Datatype rt, int root, MPI_Comm comm, const char *what);
void ck_watch_allgather(const void *s, int n, MPI_Datatype st, void *r, int m, MPI_Datatype rt, MPI_Comm comm,
                        const char *what);

/* The same collectives with the bound and the ending chosen by the caller:
 * one family for every wait of a program, whether it ends the job on a
 * timeout (a tool's agreement, a trainer's sums) or returns to say more
 * (the checker: a timeout is a verdict on the algorithm under test).
 *
 *   ck_bounded_barrier(ck_bound_job(), comm, "the barrier before saving");
 *   ck_bounded_bcast(ck_bound_comm(c), &ok, 1, MPI_INT, 0, ck_comm_mpi(c), "the verdict");
 *   char why[1536];
 *   if (ck_bounded_allreduce(ck_bound_return(limit, why, sizeof why), in, out, 2, MPI_INT, MPI_MAX,
 *                            ctl, "the checker's agreement")) ... why says who did not come
 *
 * A bound of seconds <= 0 (--timeout 0, the default under SimGrid SMPI)
 * runs the blocking collective itself: nothing is watched, and SMPI's
 * nonblocking collectives are naive (its MPI_Iallreduce sends p^2
 * messages) while every poll costs simulated time. The polling does not
 * sleep in its first 50 ms: a barrier before a timed iteration releases
 * every rank at once. */
typedef struct ck_bound {
    double seconds;   /* <= 0: no bound */
    char  *why;       /* NULL: end the job (ck_watch_abort) on a timeout or an MPI failure;
                         else return CK_ERR_TIMEOUT or CK_ERR_TRANSPORT with the reason here */
    size_t whylen;
} ck_bound;
ck_bound ck_bound_job(void);                    /* the watchdog's bound (ck_watch_timeout); ends the job */
ck_bound ck_bound_comm(ck_comm *comm);          /* the communicator's config.timeout_s; ends the job */
ck_bound ck_bound_return(double seconds, char *why, size_t whylen);   /* returns on a timeout */
/* CK_SUCCESS, or (a returning bound) CK_ERR_TIMEOUT / CK_ERR_TRANSPORT. */
int ck_bounded_barrier(ck_bound b, MPI_Comm comm, const char *what);
int ck_bounded_bcast(ck_bound b, void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, const char *what);
int ck_bounded_allreduce(ck_bound b, const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                         const char *what);
int ck_bounded_reduce(ck_bound b, const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                      const char *what);
int ck_bounded_gather(ck_bound b, const void *s, int n, MPI_Datatype st, void *r, int m, MPI_Datatype rt, int root,
                      MPI_Comm comm, const char *what);
int ck_bounded_gatherv(ck_bound b, const void *s, int n, MPI_Datatype st, void *r, const int *counts,
                       const int *displs, MPI_Datatype rt, int root, MPI_Comm comm, const char *what);
int ck_bounded_allgather(ck_bound b, const void *s, int n, MPI_Datatype st, void *r, int m, MPI_Datatype rt,
                         MPI_Comm comm, const char *what);
int ck_bounded_allgatherv(ck_bound b, const void *s, int n, MPI_Datatype st, void *r, const int *counts,
                          const int *displs, MPI_Datatype rt, MPI_Comm comm, const char *what);

/* The wait itself, for a program that says more before it ends the job:
 * CK_SUCCESS when *rq completed within `bound` seconds (roll call included),
 * else CK_ERR_TIMEOUT with the watchdog's sentence in why. */
int  ck_watch_wait(MPI_Request *rq, double bound, const char *what, char *why, size_t cap);
/* "PROG: MESSAGE; ending the job" on stderr, then MPI_Abort: does not return. */
void ck_watch_abort(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* A bounded barrier over MPI_COMM_WORLD, then MPI_Finalize: MPI_Finalize
 * itself waits for every rank, unbounded. */
void ck_watch_finalize(void);

/* For waits inside the library and the tools' own polling loops: say what
 * this thread waits for (answers name it), take and answer roll calls. */
void   ck_watch_enter(const char *what);
void   ck_watch_leave(void);
void   ck_watch_answer(void);
double ck_watch_grace(double bound);

/* The one back-off policy of every polling loop: what a poll that found
 * nothing costs. Spin (poll again at once: a short wait ends within
 * microseconds), then yield the core, then nap, so that a long wait leaves
 * the core to the ranks that compute (more ranks than cores); and while
 * waiting, answer roll calls every 5 ms. Each stage lasts until its count of
 * polls or its seconds, whichever comes first (ULONG_MAX, INFINITY: no
 * limit of that kind). A loop that must release every rank at once (the
 * barrier before a timed iteration) spins long enough to.
 *
 *   ck_backoff b;
 *   ck_backoff_start(&b, &policy, 1);
 *   while (!done()) ck_backoff_pause(&b);       b.now: the clock as last read */
typedef struct ck_backoff_policy {
    unsigned long spin_polls;    /* spin while polls < spin_polls ... */
    double        spin_s;        /* ... and seconds < spin_s */
    unsigned long yield_polls;   /* then yield while polls < yield_polls (in all) ... */
    double        yield_s;       /* ... and seconds < yield_s (in all) */
    long          nap_ns;        /* then nap this long a poll; 0: yield for ever */
} ck_backoff_policy;

typedef struct ck_backoff {
    const ck_backoff_policy *p;
    unsigned long polls;
    double        t0, now, next_answer;   /* ck_now(): the start, the last reading */
    int           answer;                 /* take and answer roll calls while waiting */
    void        (*yield)(void *arg);      /* the yield stage's pause (NULL: sched_yield) */
    void         *yield_arg;
} ck_backoff;

void ck_backoff_start(ck_backoff *b, const ck_backoff_policy *p, int answer);
/* One poll found nothing: spin, yield or nap, as the policy says. The clock
 * is read every 256 polls while spinning, every 16 while yielding, every
 * poll while napping (a nap costs more than reading it). */
void ck_backoff_pause(ck_backoff *b);

#ifdef __cplusplus
}
#endif
#endif /* COLLKIT_H */
