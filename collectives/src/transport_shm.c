/*
 * transport_shm.c — the shared-memory transport: the same point-to-point
 * interface as transport_mpi.c, for host buffers of ranks on one node, and
 * the CPU twin of the CUDA IPC transport (transport_cuda.c): ranks map each
 * other's memory, the protocol (protocol.h: staging slots, GRANT/FILL,
 * matching, checks, failures) is the very engine the CUDA transport runs,
 * and only the copies and the control channel differ.
 *
 * Setup (ck_transport_shm_create, collective)
 *   - every rank must be on one node (MPI_Comm_split_type SHARED); when not,
 *     every rank says CK_ERR_UNSUPPORTED with the reason and ck_comm_create
 *     falls back to the MPI transport;
 *   - each rank creates one anonymous shared-memory file (memfd_create),
 *     sized to its segment (sparse: a page is given only when committed), and
 *     maps it; the (pid, descriptor) pairs are all-gathered, every rank maps
 *     every peer's segment through /proc/PID/fd/FD, and all agree that this
 *     worked. The segments never have a name: a rank killed at any point of
 *     the setup leaves nothing in /dev/shm, and the memory goes back when
 *     the last process that maps it ends. Nor do they take /dev/shm's room:
 *     a small /dev/shm (a container's 64 MB) does not limit them;
 *   - one segment, the same layout on every rank (offsets from its start):
 *
 *       [ header ][ control queues: p x (s -> me) ][ slots: p x NSLOT x SLOT ][ heap ... ]
 *
 *     queue s and slot ring s receive from rank s. The heap is where ck_alloc
 *     takes buffers from, so a buffer of one rank is memory every peer can
 *     load from (ck_shm_offset/ck_shm_base in collkit_shm.h): what oneshot
 *     and twoshot reduce straight out of.
 *
 * The protocol's two plug-ins (ck_proto_ops)
 *   - control messages go through single-producer single-consumer queues in
 *     the receiver's segment, one per ordered pair of ranks: the sender
 *     writes an entry and publishes it with a release store of the queue's
 *     head; the receiver reads the head with an acquire load, moves the new
 *     entries into a private inbox and releases their places with a store of
 *     the tail. The engine asks for "the next GRANT (or FILL) of this (peer,
 *     tag)": the oldest matching inbox entry, so messages of one (peer, tag)
 *     come in the order they were sent, as MPI would deliver them. A full
 *     queue (many 0-byte grants outstanding) is no error: the entry waits in
 *     a private outbox and goes out at the next progress pass.
 *   - put/get are memcpy into the peer's slot / out of mine. Ordering: a put
 *     happens before the FILL that names the slot is published (release),
 *     and the get after it is read (acquire); the receiver grants the slot
 *     again only after its get has returned, and that GRANT is published with
 *     release too, so a chunk never overwrites one not yet copied out. The
 *     copies are synchronous: a send is done when its last chunk is in the
 *     peer's slot, a receive when its last chunk is in the buffer.
 *
 * Waiting. Nothing here blocks: the communicator's watchdog polls test()
 * like on every transport, so a stalled peer ends in CK_ERR_TIMEOUT with
 * "rank 2 waited for rank 1 at step 3". How a test that finds nothing new
 * waits is ck_shm_tr_pause's rule: give the core away at once when the node
 * has more ranks than cores, or the peer last ran on this very core (it
 * cannot act while we spin), else spin a few tens of microseconds first (a
 * yield hands the core to whatever else is runnable, another job included,
 * for a whole time slice), then yield.
 *
 * The heap. A first-fit free list over the heap area, 64-byte aligned
 * blocks with a 64-byte header. Memory is committed (fallocate) when a block
 * is handed out, so shared memory that runs short (the node's memory, a
 * cgroup limit) is an allocation that falls back to plain malloc, never a
 * SIGBUS later; large freed extents are punched out
 * again. When the heap is exhausted, ck_alloc returns plain host memory:
 * everything still works, the single-copy algorithms copy such buffers in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "collkit_util.h"
#include "env.h"
#include "protocol.h"
#include "transport_shm.h"

#define NSLOT     4
#define SLOT      ((size_t)256 << 10)     /* chunk size: small enough to stay in cache between the copies */
#define QCAP      256                     /* control queue entries per ordered pair */
#define HDR       ((size_t)4096)
#define BLOCK_HDR ((size_t)64)
#define HEAP_DEFAULT ((uint64_t)8 << 30)  /* virtual: pages are committed as buffers are handed out */
#define PUNCH_MIN ((size_t)1 << 20)
#define MAGIC     0x636b73686d736567ull   /* "cksgmshm" */
#define BLK_MAGIC 0x636b626c6f636b21ull

typedef struct { int32_t kind, tag; int64_t m[3]; } ctl_msg;

typedef struct {
    _Alignas(64) _Atomic uint64_t head;   /* entries published by the sender */
    _Alignas(64) _Atomic uint64_t tail;   /* entries taken by the receiver */
    _Alignas(64) ctl_msg q[QCAP];
} ctl_queue;

typedef struct {                                  /* at offset 0; the layout is the same everywhere */
    uint64_t magic, size;
    _Alignas(64) _Atomic int32_t cpu;              /* the CPU the owner last ran on when it waited */
} seg_header;

typedef struct { ctl_msg *v; size_t n, cap; } msgvec;

typedef struct extent { size_t off, len; struct extent *next; } extent;

typedef struct shm_tr {
    int        rank, size;
    int        oversub;       /* more ranks than cores: a waiting rank always gives its core away */
    size_t     seg_bytes, q_off, slot_off, heap_off;
    char     **base;          /* [size]: every rank's segment, mapped here */
    int        fd;            /* my segment (commit, punch) */
    ck_proto   pr;
    msgvec    *inbox;         /* [size]: control messages taken off queue q, not yet matched */
    msgvec    *outbox;        /* [size]: control messages for q waiting for room in its queue */
    unsigned long seen, misses;
    double     since, waited; /* when the current run of empty tests began, and how long ago (updated now and then) */
    pthread_mutex_t mu;       /* the heap: ck_alloc may come from any thread */
    size_t     top;           /* heap: end of the part ever handed out (offset from heap_off) */
    extent    *free_list;     /* heap: free extents below top, by offset */
} shm_tr;

/* ------------------------------------------------------------ layout */

static ctl_queue *queue_of(shm_tr *t, int owner, int sender)
{
    return (ctl_queue *)(t->base[owner] + t->q_off + (size_t)sender * sizeof(ctl_queue));
}
static char *slot_of(shm_tr *t, int owner, int sender, int k)
{
    return t->base[owner] + t->slot_off + ((size_t)sender * NSLOT + (size_t)k) * SLOT;
}

/* ------------------------------------------------------------ control channel */

static int vec_push(msgvec *v, const ctl_msg *m)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        ctl_msg *n = realloc(v->v, cap * sizeof *n);
        if (!n) return -1;
        v->v = n;
        v->cap = cap;
    }
    v->v[v->n++] = *m;
    return 0;
}

/* Move what fits of q's outbox into its queue, in order. */
static void flush_to(shm_tr *t, int q)
{
    msgvec *o = &t->outbox[q];
    if (!o->n) return;
    ctl_queue *cq = queue_of(t, q, t->rank);
    uint64_t h = atomic_load_explicit(&cq->head, memory_order_relaxed);   /* mine alone */
    uint64_t tl = atomic_load_explicit(&cq->tail, memory_order_acquire);
    size_t k = 0;
    for (; k < o->n && h - tl < QCAP; k++, h++) cq->q[h % QCAP] = o->v[k];
    if (!k) return;
    atomic_store_explicit(&cq->head, h, memory_order_release);
    memmove(o->v, o->v + k, (o->n - k) * sizeof *o->v);
    o->n -= k;
}

static int shm_ctl_send(void *self, int kind, int peer, int tag, int64_t m0, int64_t m1, int64_t m2)
{
    shm_tr *t = self;
    ctl_msg m = {kind, tag, {m0, m1, m2}};
    if (vec_push(&t->outbox[peer], &m))
        return ck_proto_break(&t->pr, CK_ERR_NOMEM, "out of host memory for a control message");
    flush_to(t, peer);
    return CK_SUCCESS;
}

static int shm_ctl_progress(void *self)
{
    shm_tr *t = self;
    for (int q = 0; q < t->size; q++) flush_to(t, q);
    return CK_SUCCESS;
}

/* Take everything queue `from` holds into its inbox. */
static int drain_queue(shm_tr *t, int from)
{
    ctl_queue *cq = queue_of(t, t->rank, from);
    uint64_t tl = atomic_load_explicit(&cq->tail, memory_order_relaxed);   /* mine alone */
    uint64_t h = atomic_load_explicit(&cq->head, memory_order_acquire);
    if (h == tl) return 0;
    for (; tl != h; tl++)
        if (vec_push(&t->inbox[from], &cq->q[tl % QCAP])) break;
    atomic_store_explicit(&cq->tail, tl, memory_order_release);
    return tl == h ? 0 : -1;
}

static int shm_ctl_take(void *self, int kind, ck_proto_op *o)
{
    shm_tr *t = self;
    if (drain_queue(t, o->peer)) return -ck_proto_break(&t->pr, CK_ERR_NOMEM, "out of host memory for a control message");
    msgvec *in = &t->inbox[o->peer];
    for (size_t i = 0; i < in->n; i++)
        if (in->v[i].kind == kind && in->v[i].tag == o->tag) {
            memcpy(o->msg, in->v[i].m, sizeof o->msg);
            memmove(in->v + i, in->v + i + 1, (in->n - i - 1) * sizeof *in->v);
            in->n--;
            return 1;
        }
    return 0;
}

static void shm_ctl_forget(void *self, ck_proto_op *o) { (void)self; (void)o; }

static int shm_put(void *self, int peer, int k, const void *src, size_t len)
{
    shm_tr *t = self;
    memcpy(slot_of(t, peer, t->rank, k), src, len);
    return CK_SUCCESS;
}

static int shm_get(void *self, int peer, int k, void *dst, size_t len)
{
    shm_tr *t = self;
    memcpy(dst, slot_of(t, t->rank, peer, k), len);
    return CK_SUCCESS;
}

static const ck_proto_ops shm_ops = {
    .ctl_send = shm_ctl_send, .ctl_take = shm_ctl_take, .ctl_forget = shm_ctl_forget,
    .ctl_progress = shm_ctl_progress, .put = shm_put, .get = shm_get,
};

/* ------------------------------------------------------------ point to point */

static int shm_isend(void *self, const void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return ck_proto_post(&((shm_tr *)self)->pr, 1, (void *)buf, bytes, peer, tag, r);
}

static int shm_irecv(void *self, void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return ck_proto_post(&((shm_tr *)self)->pr, 0, buf, bytes, peer, tag, r);
}

/* ------------------------------------------------------------ waiting */

void ck_shm_tr_here(void *self)
{
    shm_tr *t = self;
    atomic_store_explicit(&((seg_header *)t->base[t->rank])->cpu, (int32_t)sched_getcpu(), memory_order_relaxed);
}

void ck_shm_tr_pause(void *self, int peer, double waited)
{
    shm_tr *t = self;
    int cpu = sched_getcpu();
    int theirs = peer >= 0 && peer < t->size
                     ? atomic_load_explicit(&((seg_header *)t->base[peer])->cpu, memory_order_relaxed) : -1;
    if (t->oversub || cpu == theirs || waited > CK_SHM_SPIN_S) {
        sched_yield();
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    for (int i = 0; i < 16; i++) __builtin_ia32_pause();
#endif
}

static int shm_test(void *self, ck_req *r, int *done)
{
    shm_tr *t = self;
    int rc = ck_proto_test(&t->pr, r, done);
    if (rc || *done || t->pr.progressed != t->seen) {
        t->seen = t->pr.progressed;
        t->misses = 0;
    } else {
        /* nothing came: wait by the rule above, from the first empty test on */
        if (t->misses++ == 0) { ck_shm_tr_here(t); t->since = ck_now(); t->waited = 0; }
        else if ((t->misses & 15) == 0) t->waited = ck_now() - t->since;
        ck_shm_tr_pause(t, r->peer, t->waited);
    }
    return rc;
}

static void shm_cancel(void *self, ck_req *r) { ck_proto_cancel(&((shm_tr *)self)->pr, r); }

/* One progress pass of the engine: queued control messages out, grants
 * answered with chunks, chunks copied out (what every test does first). */
static int shm_progress(void *self)
{
    shm_tr *t = self;
    return t->pr.broken ? ck_proto_dead(&t->pr) : ck_proto_progress(&t->pr);
}

/* ------------------------------------------------------------ local work */

static int shm_reduce(void *self, void *dst, const void *a, const void *b, size_t n, ck_dtype dt, ck_op op)
{
    (void)self;
    return ck_reduce_host(dst, a, b, n, dt, op);
}

static int shm_divide(void *self, void *buf, size_t n, ck_dtype dt, int divisor)
{
    (void)self;
    return ck_divide_host(buf, n, dt, divisor);
}

static int shm_copy(void *self, void *dst, const void *src, size_t bytes)
{
    (void)self;
    if (bytes && dst != src) memmove(dst, src, bytes);
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ the heap */

static size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

/* Give the pages wholly inside [off, off + len) of the heap back to tmpfs. */
static void punch(shm_tr *t, size_t off, size_t len)
{
    if (len < PUNCH_MIN) return;
    const size_t pg = 4096, a = round_up(t->heap_off + off, pg), b = (t->heap_off + off + len) / pg * pg;
    if (b > a) fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a, (off_t)(b - a));
}

/* Put [off, off + len) back on the free list, merged with its neighbours;
 * an extent that reaches the top lowers it instead. Under t->mu. */
static void heap_release(shm_tr *t, size_t off, size_t len)
{
    extent **pp = &t->free_list, *prev = NULL;
    while (*pp && (*pp)->off < off) { prev = *pp; pp = &(*pp)->next; }
    extent *next = *pp;
    if (prev && prev->off + prev->len == off) {
        prev->len += len;
        if (next && prev->off + prev->len == next->off) { prev->len += next->len; prev->next = next->next; free(next); }
        off = prev->off; len = prev->len;
    } else if (next && off + len == next->off) {
        next->off = off; next->len += len;
        len = next->len;
    } else {
        extent *e = malloc(sizeof *e);
        if (!e) return;   /* the extent is lost to this heap: memory stays committed, nothing breaks */
        *e = (extent){off, len, next};
        *pp = e;
    }
    /* the last free extent touching the top: lower the top */
    extent **lp = &t->free_list;
    while (*lp && (*lp)->next) lp = &(*lp)->next;
    if (*lp && (*lp)->off + (*lp)->len == t->top) {
        t->top = (*lp)->off;
        free(*lp);
        *lp = NULL;
    }
    punch(t, off, len);
}

/* An extent of `need` bytes: first fit below the top, else from the top. Under t->mu. */
static int heap_take(shm_tr *t, size_t need, size_t *off)
{
    for (extent **pp = &t->free_list; *pp; pp = &(*pp)->next) {
        extent *e = *pp;
        if (e->len < need) continue;
        *off = e->off;
        e->off += need;
        e->len -= need;
        if (!e->len) { *pp = e->next; free(e); }
        return 0;
    }
    const size_t heap_bytes = t->seg_bytes - t->heap_off;
    if (t->top + need > heap_bytes) return -1;
    *off = t->top;
    t->top += need;
    return 0;
}

static void *plain_alloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, round_up(bytes ? bytes : 1, 64))) return NULL;
    return p;
}

static void *shm_alloc(void *self, size_t bytes)
{
    shm_tr *t = self;
    const size_t need = round_up(bytes ? bytes : 1, 64) + BLOCK_HDR;
    size_t off;
    pthread_mutex_lock(&t->mu);
    int got = heap_take(t, need, &off) == 0;
    /* Commit the pages now: memory that runs short is then a malloc here, not a SIGBUS later. */
    if (got && fallocate(t->fd, 0, (off_t)(t->heap_off + off), (off_t)need)) {
        heap_release(t, off, need);
        got = 0;
    }
    pthread_mutex_unlock(&t->mu);
    if (!got) return plain_alloc(bytes);
    uint64_t *h = (uint64_t *)(t->base[t->rank] + t->heap_off + off);
    h[0] = BLK_MAGIC;
    h[1] = need;
    return (char *)h + BLOCK_HDR;
}

static int in_heap(shm_tr *t, const void *p)
{
    const char *c = p, *lo = t->base[t->rank] + t->heap_off, *hi = t->base[t->rank] + t->seg_bytes;
    return c >= lo && c < hi;
}

static void shm_free(void *self, void *p)
{
    shm_tr *t = self;
    if (!p) return;
    if (!in_heap(t, p)) { free(p); return; }
    uint64_t *h = (uint64_t *)((char *)p - BLOCK_HDR);
    if (h[0] != BLK_MAGIC) {
        fprintf(stderr, "collkit shm: rank %d: ck_free(%p): not a block of this heap (its header was overwritten?)\n",
                t->rank, p);
        return;
    }
    h[0] = 0;
    pthread_mutex_lock(&t->mu);
    heap_release(t, (size_t)((char *)h - (t->base[t->rank] + t->heap_off)), (size_t)h[1]);
    pthread_mutex_unlock(&t->mu);
}

/* ------------------------------------------------------------ accessors */

char *ck_shm_tr_base(void *self, int q)
{
    shm_tr *t = self;
    return q >= 0 && q < t->size ? t->base[q] : NULL;
}

int64_t ck_shm_tr_offset(void *self, const void *p, size_t bytes)
{
    shm_tr *t = self;
    const char *c = p, *lo = t->base[t->rank] + t->heap_off, *hi = t->base[t->rank] + t->seg_bytes;
    if (!c || c < lo || c > hi || bytes > (size_t)(hi - c)) return -1;
    return (int64_t)(c - t->base[t->rank]);
}

static const char *shm_error(void *self) { return ((shm_tr *)self)->pr.err; }

/* ------------------------------------------------------------ lifecycle */

static void shm_destroy(void *self)
{
    shm_tr *t = self;
    if (!t) return;
    ck_proto_fini(&t->pr);
    for (int q = 0; t->base && q < t->size; q++)
        if (t->base[q]) munmap(t->base[q], t->seg_bytes);
    for (int q = 0; q < t->size; q++) {
        if (t->inbox) free(t->inbox[q].v);
        if (t->outbox) free(t->outbox[q].v);
    }
    for (extent *e = t->free_list, *n; e; e = n) { n = e->next; free(e); }
    if (t->fd >= 0) close(t->fd);
    pthread_mutex_destroy(&t->mu);
    free(t->base);
    free(t->inbox);
    free(t->outbox);
    free(t);
}

/* The node's cores (all ranks of the communicator are on this node). */
static int cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The heap's size: COLLKIT_SHM_HEAP ("16G"), else 8 GiB. Virtual only. A
 * value it cannot use is named (once, by rank 0) and the default kept. */
static size_t heap_size(int rank)
{
    uint64_t v;
    if (ck_env_size("COLLKIT_SHM_HEAP", 0, (uint64_t)1 << 44, rank, "the heap stays 8G", &v) == 0) return (size_t)v;
    return (size_t)HEAP_DEFAULT;
}

/* My segment: create, size, commit the fixed part, map. A memfd has no
 * name anywhere: nothing a killed rank could leave behind, and its memory
 * goes back when the last process that maps it or holds it ends. Its pages
 * come from the kernel's internal shmem mount, not from /dev/shm, so a small
 * or full /dev/shm does not limit it (the node's memory and cgroup do). */
static int create_segment(shm_tr *t, char *why, size_t whylen)
{
    t->fd = (int)memfd_create("collkit-shm", MFD_CLOEXEC);
    if (t->fd < 0) {
        snprintf(why, whylen, "memfd_create: %s", strerror(errno));
        return CK_ERR_UNSUPPORTED;
    }
    int rc = CK_SUCCESS;
    if (ftruncate(t->fd, (off_t)t->seg_bytes)) {
        snprintf(why, whylen, "ftruncate of the shared segment: %s", strerror(errno));
        rc = CK_ERR_UNSUPPORTED;
    } else if (fallocate(t->fd, 0, 0, (off_t)t->heap_off)) {
        snprintf(why, whylen, "the staging slots need %zu MB of shared memory per rank: %s", t->heap_off >> 20,
                 strerror(errno));
        rc = CK_ERR_UNSUPPORTED;
    } else {
        void *p = mmap(NULL, t->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, t->fd, 0);
        if (p == MAP_FAILED) {
            snprintf(why, whylen, "mmap of the shared segment: %s", strerror(errno));
            rc = CK_ERR_UNSUPPORTED;
        } else {
            t->base[t->rank] = p;
            ((seg_header *)p)->magic = MAGIC;
            ((seg_header *)p)->size = t->seg_bytes;
        }
    }
    return rc;
}

/* Map rank q's segment: its descriptor, opened through /proc (the ranks of
 * one node run as one user, so each may open the others' descriptors; a
 * kernel or container that forbids it is a fallback to MPI, with why). */
static int map_peer(shm_tr *t, int q, long pid, int fd, char *why, size_t whylen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%d", pid, fd);
    int f = open(path, O_RDWR | O_CLOEXEC);
    void *p = f < 0 ? MAP_FAILED : mmap(NULL, t->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, f, 0);
    const int err = errno;
    if (f >= 0) close(f);
    if (p == MAP_FAILED || ((seg_header *)p)->magic != MAGIC || ((seg_header *)p)->size != t->seg_bytes) {
        snprintf(why, whylen, "cannot map rank %d's segment (%s): %s", q, path,
                 p == MAP_FAILED ? strerror(err) : "a different layout (COLLKIT_SHM_HEAP differs?)");
        if (p != MAP_FAILED) munmap(p, t->seg_bytes);
        return CK_ERR_UNSUPPORTED;
    }
    t->base[q] = p;
    return CK_SUCCESS;
}

/* Test hook (tests/faults): COLLKIT_FAULT=shm/POINT:RANK:SIG (collkit_util.h)
 * stops or kills rank RANK at setup point POINT: 1 its segment made, 2 every
 * rank's made, 3 the descriptors gathered, 4 the peers' segments mapped,
 * 5 all agreed. */
static void setup_point(int point, int rank)
{
    char hook[16];
    snprintf(hook, sizeof hook, "shm/%d", point);
    ck_fault_point(hook, rank);
}

/* Every rank agrees on a status: the worst one wins (a reason from this
 * rank, or "rank R failed" for another's). */
static int agree(MPI_Comm comm, int rc, char *why, size_t whylen, int rank)
{
    int in[2] = {rc, rc ? rank : -1}, out[2];
    ck_watch_allreduce(in, out, 2, MPI_INT, MPI_MAX, comm, "setting up shared memory");
    if (out[0] && !rc) snprintf(why, whylen, "rank %d could not set up its shared segment", out[1]);
    return out[0];
}

int ck_transport_shm_create(MPI_Comm comm, ck_transport *out, char *why, size_t whylen)
{
    int rank, size, lsize = 0, nodes = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    snprintf(why, whylen, "%s", "");
#ifdef COLLKIT_SMPI
    /* SimGrid SMPI: every rank is a simulated host of its own, and the
     * simulated network is the point; memory shared across ranks would move
     * data outside the simulation (and the ranks share one process anyway). */
    (void)rank;
    (void)size;
    snprintf(why, whylen, "SimGrid SMPI simulates every rank on a host of its own, so there is no shared memory "
             "between ranks to use");
    (void)out;
    return CK_ERR_UNSUPPORTED;
#endif

    /* One node, or MPI. (MPI_Comm_split_type has no nonblocking form: the
     * bounded barrier first, so a rank missing from the start is named.) */
    ck_watch_barrier(comm, "setting up shared memory");
    MPI_Comm local;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local) != MPI_SUCCESS) {
        snprintf(why, whylen, "MPI_Comm_split_type failed");
        return CK_ERR_TRANSPORT;
    }
    int lrank = 0, leader;
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    MPI_Comm_free(&local);
    leader = lrank == 0;
    ck_watch_allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, comm, "setting up shared memory");
    if (nodes > 1 || lsize != size) {
        snprintf(why, whylen, "the %d ranks are on %d nodes, and shared memory reaches the ranks of one node only",
                 size, nodes);
        return CK_ERR_UNSUPPORTED;
    }

    shm_tr *t = calloc(1, sizeof *t);
    int rc = t ? CK_SUCCESS : CK_ERR_NOMEM;
    if (t) {
        t->rank = rank;
        t->size = size;
        t->fd = -1;
        t->oversub = size > cores();
        pthread_mutex_init(&t->mu, NULL);
        t->q_off = HDR;
        t->slot_off = round_up(t->q_off + (size_t)size * sizeof(ctl_queue), 4096);
        t->heap_off = round_up(t->slot_off + (size_t)size * NSLOT * SLOT, (size_t)2 << 20);
        t->seg_bytes = t->heap_off + round_up(heap_size(rank), (size_t)2 << 20);
        t->base = calloc((size_t)size, sizeof *t->base);
        t->inbox = calloc((size_t)size, sizeof *t->inbox);
        t->outbox = calloc((size_t)size, sizeof *t->outbox);
        rc = t->base && t->inbox && t->outbox ? CK_SUCCESS : CK_ERR_NOMEM;
        if (!rc) rc = ck_proto_init(&t->pr, &shm_ops, t, "shm", rank, size, 32767, SLOT, NSLOT);
        if (!rc) rc = create_segment(t, why, whylen);
        else snprintf(why, whylen, "out of host memory");
    }
    setup_point(1, rank);
    rc = agree(comm, rc, why, whylen, rank);
    setup_point(2, rank);
    if (rc) {
        shm_destroy(t);
        return rc;
    }

    /* Map every peer's segment: (pid, descriptor) of each, all-gathered. */
    int64_t mine[2] = {(int64_t)getpid(), t->fd}, *ids = malloc((size_t)size * sizeof mine);
    rc = ids ? CK_SUCCESS : CK_ERR_NOMEM;
    if (rc) snprintf(why, whylen, "out of host memory");
    rc = agree(comm, rc, why, whylen, rank);
    if (!rc) {
        ck_watch_allgather(mine, 2, MPI_INT64_T, ids, 2, MPI_INT64_T, comm, "setting up shared memory");
        setup_point(3, rank);
        for (int q = 0; q < size && !rc; q++)
            if (q != rank) rc = map_peer(t, q, (long)ids[2 * q], (int)ids[2 * q + 1], why, whylen);
        setup_point(4, rank);
        /* Every rank keeps its descriptor open until all have mapped: the
         * agreement orders that. */
        rc = agree(comm, rc, why, whylen, rank);
    }
    free(ids);
    setup_point(5, rank);
    if (rc) {
        shm_destroy(t);
        return rc;
    }

    int flag = 0, *ub = NULL;
    MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag);
    t->pr.tag_ub = flag && ub ? *ub : 32767;
    *out = (ck_transport){
        .name = "shm", .mem = CK_MEM_HOST | CK_MEM_SHM, .self = t,
        .isend = shm_isend, .irecv = shm_irecv, .test = shm_test, .cancel = shm_cancel, .progress = shm_progress,
        .reduce = shm_reduce, .divide = shm_divide, .copy = shm_copy,
        .upload = shm_copy, .download = shm_copy,
        .alloc = shm_alloc, .free = shm_free, .finish = NULL, .destroy = shm_destroy,
        .set_timeout = NULL, .error = shm_error,
    };
    return CK_SUCCESS;
}
