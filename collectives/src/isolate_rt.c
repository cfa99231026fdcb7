/*
 * isolate_rt.c — the minimal runtime of collkit_algo.h, for a graded
 * algorithm that runs in a process of its own (collkit_isolate.h). With the
 * file's object and the C library it is the whole program NAME.algo: no MPI,
 * no library algorithm, no checker, nothing whose memory a grade is read
 * from. Memory scanned from here finds the file's own data, this runtime's
 * and the region the trusted side shares with it — the buffers of the call.
 *
 * What the interface does that moves data or counts it (ck_isend, ck_irecv,
 * ck_wait, ck_step, ck_count_traffic) is a request to the trusted process,
 * which does it over the real transport; what is local (ck_reduce_local,
 * ck_copy, ck_scratch, ck_algo_state) is done here. Buffers outside the
 * shared region (the stack, malloc) travel through staging space in it.
 * Before it reads its first request the process is confined (seccomp, an
 * allow list): it can read and write the descriptors it has, manage memory
 * that is never executable, read the clock, sleep and end — no open, no
 * socket, no process, thread or program, no signal to another process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "collkit_algo.h"
#include "collkit_isolate.h"

struct ck_comm {            /* this process's view of the trusted communicator */
    int       rank, size;
    unsigned  mem;
    ck_config cfg, cfg_copy;
    char      transport[16];
    char      errmsg[CKI_TEXT];
    int       failed;        /* ck_fail wrote errmsg during this call */
    int       step;
};

static struct {
    const ck_algo *algo[CKI_MAX_ALGOS];
    const char    *file[CKI_MAX_ALGOS];
    int            n;
} g_reg;

static char    *g_base;              /* the shared region */
static size_t   g_bytes, g_io;       /* its size; the part the trusted side fills per call */
static ck_comm  g_comm;
static struct {                      /* scratch and staging: the region past g_io */
    char  *scratch;                  /* after its guard */
    size_t scratch_cap, scratch_bytes, asked;
    int    armed;
    size_t stage_base, stage_at, stage_end;
    int    outstanding;              /* requests posted and not yet waited for */
} g_mem;
/* The call's input, read-only to this process while a large call runs: a
 * write to it (which the interface forbids outside in place) is noted and
 * let through, so that the trusted side compares the input only when one
 * was made rather than after every call. */
static struct { char *lo, *hi; int written; } g_input;

typedef struct { const void *where; uint32_t slot; } posted_req;
static posted_req g_posted[CKI_MAX_REQS];
static int g_nposted;
static struct { const ck_algo *algo; void *state; void (*destroy)(void *); } g_state[CKI_MAX_ALGOS];

/* ------------------------------------------------------------ the channel */

static void die(const char *why)
{
    fprintf(stderr, "collkit (isolated algorithm): %s\n", why);
    fflush(stderr);
    _exit(2);
}

static void send_msg(cki_msg *m)
{
    if (write(CKI_SOCK_FD, m, sizeof *m) != (ssize_t)sizeof *m) _exit(0);   /* the trusted side is gone */
}

static void recv_msg(cki_msg *m)
{
    ssize_t n;
    while ((n = read(CKI_SOCK_FD, m, sizeof *m)) < 0 && errno == EINTR) {}
    if (n <= 0) { fflush(NULL); _exit(0); }   /* the trusted side is gone */
    if (n != (ssize_t)sizeof *m) die("a message of the channel came cut");
}

static cki_msg *request(int kind)
{
    static cki_msg m;
    memset(&m, 0, offsetof(cki_msg, slots));
    m.kind = kind;
    return &m;
}

/* An answer's status; a failure's detail becomes this side's errmsg too, as
 * ck_comm_errmsg would show it in the trusted process. */
static int answer(cki_msg *m)
{
    recv_msg(m);
    if (m->kind != CKI_REPLY) die("the trusted side answered out of turn");
    if (m->a) snprintf(g_comm.errmsg, sizeof g_comm.errmsg, "%s", m->text);
    return m->a;
}

/* ------------------------------------------------------------ registration */

void ck_register_algo_or_exit(const ck_algo *a, const char *file)
{
    if (g_reg.n == CKI_MAX_ALGOS) {
        fprintf(stderr, "collkit: %s: more than %d algorithms in one program\n", file, CKI_MAX_ALGOS);
        exit(2);
    }
    g_reg.algo[g_reg.n] = a;
    g_reg.file[g_reg.n++] = file;
}

static size_t put_text(char *at, size_t room, const char *s)
{
    size_t n = s ? strnlen(s, room - 1) : 0;
    memcpy(at, s ? s : "", n);
    at[n] = '\0';
    return n + 1;
}

/* Each descriptor as data: what the trusted side needs to register its proxy. */
static void announce(void)
{
    for (int i = 0; i < g_reg.n; i++) {
        const ck_algo *a = g_reg.algo[i];
        cki_msg *m = request(CKI_ALGO);
        m->algo = i;
        m->a = (int32_t)a->mem, m->b = (int32_t)a->flags, m->c = (int32_t)a->coll;
        const ck_count_fn counts[CKI_NUM_COUNT_FNS] = {a->bytes_sent, a->msgs_sent, a->max_msg_bytes, a->empty_msgs};
        for (int f = 0; f < CKI_NUM_COUNT_FNS; f++) m->d |= counts[f] ? CKI_HAS_COUNT << f : 0;
        m->d |= (a->run ? CKI_HAS_RUN : 0) | (a->cost ? CKI_HAS_COST : 0) | (a->diagnose ? CKI_HAS_DIAGNOSE : 0) |
                (a->summary ? CKI_HAS_SUMMARY : 0) | (a->bytes_formula ? CKI_HAS_BYTES_FORMULA : 0) |
                (a->cost_formula ? CKI_HAS_COST_FORMULA : 0);
        size_t at = 0;
        at += put_text(m->text + at, 128, a->name);   /* (a name too long to register stays too long) */
        at += put_text(m->text + at, 224, a->summary);
        at += put_text(m->text + at, 224, a->bytes_formula);
        at += put_text(m->text + at, 224, a->cost_formula);
        put_text(m->text + at, CKI_TEXT - at, g_reg.file[i]);
        send_msg(m);
    }
    send_msg(request(CKI_ALGOS_END));
}

/* ------------------------------------------------------------ the communicator */

int ck_comm_rank(const ck_comm *c) { return c->rank; }
int ck_comm_size(const ck_comm *c) { return c->size; }
unsigned ck_comm_mem(const ck_comm *c) { return c->mem; }
const char *ck_comm_transport_name(const ck_comm *c) { return c->transport; }
const char *ck_comm_errmsg(const ck_comm *c) { return c ? c->errmsg : ""; }

const ck_config *ck_comm_config(ck_comm *c)
{
    c->cfg_copy = c->cfg;   /* a copy, as in the library: writing through it changes nothing */
    return &c->cfg_copy;
}

int ck_fail(ck_comm *c, int status, const char *fmt, ...)
{
    if (c) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->errmsg, sizeof c->errmsg, fmt, ap);
        va_end(ap);
        c->failed = 1;
    }
    return status;
}

double ck_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *ck_algo_state(ck_comm *c, const ck_algo *algo)
{
    (void)c;
    for (int i = 0; i < CKI_MAX_ALGOS; i++)
        if (g_state[i].algo == algo) return g_state[i].state;
    return NULL;
}

/* The state lives as long as the process, which is the communicator's. */
int ck_algo_state_set(ck_comm *c, const ck_algo *algo, void *state, void (*destroy)(void *state))
{
    (void)c;
    for (int i = 0; i < CKI_MAX_ALGOS; i++)
        if (g_state[i].algo == algo || !g_state[i].algo) {
            if (g_state[i].algo && g_state[i].destroy && g_state[i].state != state) g_state[i].destroy(g_state[i].state);
            g_state[i].algo = algo;
            g_state[i].state = state;
            g_state[i].destroy = destroy;
            return CK_SUCCESS;
        }
    return CK_ERR_NOMEM;
}

/* ------------------------------------------------------------ bookkeeping */

void ck_step(ck_comm *c, int step, const char *phase)
{
    c->step = step;
    cki_msg *m = request(CKI_STEP);
    m->a = step;
    m->b = phase != NULL;
    if (phase) snprintf(m->text, 64, "%s", phase);
    send_msg(m);
}

void ck_count_traffic(ck_comm *c, uint64_t bytes_sent, uint64_t msgs_sent, uint64_t bytes_recv, uint64_t msgs_recv)
{
    (void)c;
    cki_msg *m = request(CKI_TRAFFIC);
    m->x[0] = bytes_sent, m->x[1] = msgs_sent, m->x[2] = bytes_recv, m->x[3] = msgs_recv;
    send_msg(m);
}

/* The drawing tool's marks: no tool draws an isolated run. */
void ck_show_shared(ck_comm *c, const char *name, const void *buf, size_t bytes)
{
    (void)c, (void)name, (void)buf, (void)bytes;
}

void ck_show_load(ck_comm *c, int peer, const char *from, const void *buf, size_t bytes)
{
    (void)c, (void)peer, (void)from, (void)buf, (void)bytes;
}

/* ------------------------------------------------------------ local work */

int ck_reduce_local(ck_comm *c, void *dst, const void *a, const void *b, size_t count, ck_dtype dt, ck_op op)
{
    if (!count) return CK_SUCCESS;
    int rc = ck_reduce_host(dst, a, b, count, dt, op);
    return rc ? ck_fail(c, rc, "local reduce of %zu %s (%s) failed", count, ck_dtype_name(dt), ck_op_name(op)) : 0;
}

int ck_copy(ck_comm *c, void *dst, const void *src, size_t bytes)
{
    (void)c;
    if (bytes && dst != src) memmove(dst, src, bytes);
    return CK_SUCCESS;
}

static unsigned char guard_byte(size_t k) { return (unsigned char)(0xA7 ^ (k * 29u)); }   /* the library's */

/* Scratch lives in the shared region (the trusted side sends from it and
 * receives into it without a copy), in the first half of what the call's
 * buffers leave, with the library's guards and first pattern. */
void *ck_scratch(ck_comm *c, size_t bytes)
{
    (void)c;
    const size_t g = CKI_SCRATCH_GUARD;
    if (bytes > g_mem.scratch_cap) return NULL;
    if (bytes > g_mem.scratch_bytes) {
        memset(g_mem.scratch, 0xA5, bytes);
        g_mem.scratch_bytes = bytes;
    }
    g_mem.asked = bytes;
    for (size_t k = 0; k < g; k++) {
        g_mem.scratch[-1 - (ptrdiff_t)k] = (char)guard_byte(k);
        g_mem.scratch[bytes + k] = (char)guard_byte(g + k);
    }
    g_mem.armed = 1;
    return g_mem.scratch;
}

/* ------------------------------------------------------------ point to point */

static int in_region(const void *p, size_t n)
{
    const char *q = p;
    return q >= g_base && n <= g_bytes && (size_t)(q - g_base) <= g_bytes - n;
}

static char *stage(size_t bytes)
{
    size_t at = (g_mem.stage_at + 63) & ~(size_t)63;
    if (at > g_mem.stage_end || g_mem.stage_end - at < bytes) return NULL;
    g_mem.stage_at = at + bytes;
    return g_base + at;
}

/* The slot of the trusted side's request that this ck_req (by its address)
 * still holds, or -1: posting it again while it is posted is what the
 * library names "its ck_req reused for a later post". */
static int posted_slot(const ck_req *r)
{
    for (int i = 0; i < g_nposted; i++)
        if (g_posted[i].where == r) return (int)g_posted[i].slot;
    return -1;
}

static void forget_slot(uint32_t slot)
{
    for (int i = 0; i < g_nposted; i++)
        if (g_posted[i].slot == slot) g_posted[i--] = g_posted[--g_nposted];
}

/* The trusted side's request slots this process holds (posted, not yet
 * waited for): it picks them itself, so a post needs no answer. */
static unsigned char g_busy[CKI_MAX_REQS];
static int g_cursor;

static int free_slot(void)
{
    for (int i = 0; i < CKI_MAX_REQS; i++) {
        int j = (g_cursor + i) % CKI_MAX_REQS;
        if (!g_busy[j]) return g_cursor = j + 1, j;
    }
    return -1;
}

/* A post is not answered: one the trusted side cannot make (a peer that is
 * no rank, the transport's error) fails the next wait, or the call, with the
 * library's own message. impl: [0] the slot, [1] a staged receive's buffer,
 * [2] its staging offset. */
static int post(ck_comm *c, int is_send, void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    char *at = buf;
    if (bytes && !in_region(buf, bytes)) {
        if (!(at = stage(bytes)))
            return ck_fail(c, CK_ERR_NOMEM, "%s of %zu B: the isolated run's staging space is full",
                           is_send ? "send" : "recv", bytes);
        if (is_send) memcpy(at, buf, bytes);
    }
    int slot = posted_slot(r);
    if (slot < 0 && (slot = free_slot()) < 0)
        return ck_fail(c, CK_ERR_NOMEM, "more than %d requests posted at once", CKI_MAX_REQS);
    cki_msg *m = request(CKI_POST);
    m->a = is_send, m->b = peer, m->c = tag, m->d = slot;
    m->x[0] = bytes ? (uint64_t)(at - g_base) : 0;
    m->x[1] = bytes;
    send_msg(m);
    g_busy[slot] = 1;
    memset(r, 0, sizeof *r);
    r->active = 1;
    r->kind = is_send ? CK_EV_SEND : CK_EV_RECV;
    r->peer = peer, r->tag = tag, r->step = c->step, r->bytes = bytes;
    r->impl[0] = (uint64_t)slot;
    r->impl[1] = !is_send && at != buf ? (uint64_t)(uintptr_t)buf : 0;
    r->impl[2] = (uint64_t)(at - g_base);
    if (posted_slot(r) < 0 && g_nposted < CKI_MAX_REQS) g_posted[g_nposted++] = (posted_req){r, (uint32_t)slot};
    g_mem.outstanding++;
    return CK_SUCCESS;
}

int ck_isend(ck_comm *c, const void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return post(c, 1, (void *)buf, bytes, peer, tag, r);
}

int ck_irecv(ck_comm *c, void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return post(c, 0, buf, bytes, peer, tag, r);
}

/* Up to CKI_MAX_WAIT requests at a time; finished, each is inactive, and a
 * staged receive is copied where it was asked for. */
static int wait_some(ck_req *reqs, int n)
{
    cki_msg *m = request(CKI_WAIT);
    for (int i = 0; i < n; i++)
        if (reqs[i].active) m->slots[m->a++] = (uint32_t)reqs[i].impl[0];
    if (!m->a) return CK_SUCCESS;
    send_msg(m);
    int rc = answer(m);
    for (int i = 0; i < n; i++) {
        if (!reqs[i].active) continue;
        reqs[i].active = 0;
        g_busy[reqs[i].impl[0] % CKI_MAX_REQS] = 0;
        forget_slot((uint32_t)reqs[i].impl[0]);
        if (!rc && reqs[i].impl[1]) memcpy((void *)(uintptr_t)reqs[i].impl[1], g_base + reqs[i].impl[2], reqs[i].bytes);
        if (--g_mem.outstanding <= 0) g_mem.outstanding = 0, g_mem.stage_at = g_mem.stage_base;
    }
    return rc;
}

int ck_waitall(ck_comm *c, ck_req *reqs, int n)
{
    (void)c;
    for (int i = 0; i < n; i += CKI_MAX_WAIT) {
        int rc = wait_some(reqs + i, n - i < CKI_MAX_WAIT ? n - i : CKI_MAX_WAIT);
        if (rc) {
            for (int j = i; j < n; j++) reqs[j].active = 0;   /* the trusted side cleans up the rest */
            return rc;
        }
    }
    return CK_SUCCESS;
}

int ck_wait(ck_comm *c, ck_req *r) { return ck_waitall(c, r, 1); }

int ck_sendrecv(ck_comm *c, const void *sbuf, size_t sbytes, int dst, void *rbuf, size_t rbytes, int src, int tag)
{
    ck_req r[2];
    int rc;
    r[0].active = r[1].active = 0;
    if (src >= 0 && (rc = ck_irecv(c, rbuf, rbytes, src, tag, &r[1]))) return rc;
    if (dst >= 0 && (rc = ck_isend(c, sbuf, sbytes, dst, tag, &r[0]))) return rc;
    return ck_waitall(c, r, 2);
}

/* ------------------------------------------------------------ the input, guarded */

#define GUARD_MIN ((size_t)1 << 16)   /* below this, comparing costs less than two mprotect calls */

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    char *at = si->si_addr;
    if (g_input.hi > g_input.lo && at >= g_input.lo && at < g_input.hi &&
        !mprotect(g_input.lo, (size_t)(g_input.hi - g_input.lo), PROT_READ | PROT_WRITE)) {
        g_input.written = 1;   /* the write runs again, and lands */
        g_input.lo = g_input.hi = NULL;
        return;
    }
    signal(sig, SIG_DFL);   /* any other fault ends the process as it would have */
    raise(sig);
}

/* The whole pages of the input (bytes at send): read-only for this call. */
static void guard_input(char *send, size_t bytes)
{
    g_input.written = 0;
    g_input.lo = g_input.hi = NULL;
    if (bytes < GUARD_MIN) return;
    char *lo = (char *)(((uintptr_t)send + 4095) & ~(uintptr_t)4095);
    char *hi = (char *)(((uintptr_t)send + bytes) & ~(uintptr_t)4095);
    if (hi > lo && !mprotect(lo, (size_t)(hi - lo), PROT_READ)) g_input.lo = lo, g_input.hi = hi;
}

/* For the trusted side: the region's offsets of the pages that stayed
 * unwritten (x[1], x[2]; equal when none). */
static void unguard_input(cki_msg *d)
{
    if (g_input.hi > g_input.lo) {
        mprotect(g_input.lo, (size_t)(g_input.hi - g_input.lo), PROT_READ | PROT_WRITE);
        d->x[1] = (uint64_t)(g_input.lo - g_base), d->x[2] = (uint64_t)(g_input.hi - g_base);
    }
    g_input.lo = g_input.hi = NULL;
}

static void catch_faults(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
}

/* ------------------------------------------------------------ requests */

static const ck_algo *algo_of(const cki_msg *m)
{
    if (m->algo < 0 || m->algo >= g_reg.n) die("a request named no algorithm of this program");
    return g_reg.algo[m->algo];
}

/* A communicator this process never ran on: as the library gives a new one,
 * scratch that holds only its first pattern and no state of any algorithm
 * (the old one's freed, as when its communicator was destroyed). */
static void fresh_comm(void)
{
    g_mem.scratch_bytes = 0;
    for (int i = 0; i < CKI_MAX_ALGOS; i++) {
        if (g_state[i].algo && g_state[i].destroy && g_state[i].state) g_state[i].destroy(g_state[i].state);
        g_state[i].algo = NULL;
    }
}

static void run(cki_msg *m)
{
    const ck_algo *a = algo_of(m);
    if (m->f[0] != 0) fresh_comm();
    g_comm.rank = m->a, g_comm.size = m->b, g_comm.mem = (unsigned)m->x[3];
    g_comm.cfg = m->cfg;
    snprintf(g_comm.transport, sizeof g_comm.transport, "%.15s", m->text);
    g_comm.errmsg[0] = '\0';
    g_comm.failed = 0;
    g_comm.step = 0;
    g_mem.armed = 0;
    g_mem.outstanding = 0;
    g_mem.stage_at = g_mem.stage_base;
    g_nposted = 0;
    memset(g_busy, 0, sizeof g_busy);
    const size_t count = m->x[0], sent = m->x[1], recv = m->x[2];
    if (sent > g_io || recv > g_io || m->f[1] < 0 || (size_t)m->f[1] > g_io - sent)
        die("a call's buffers lie outside the region");
    guard_input(g_base + sent, (size_t)m->f[1]);
    int rc = a->run(&g_comm, g_base + sent, g_base + recv, count, (ck_dtype)m->c, (ck_op)m->d);
    cki_msg *d = request(CKI_DONE);
    unguard_input(d);
    d->a = rc;
    d->b = g_comm.failed;
    if (g_comm.failed) snprintf(d->text, CKI_TEXT / 2, "%s", g_comm.errmsg);
    d->c = g_mem.armed;
    d->x[0] = g_mem.asked;
    if (g_mem.armed) {   /* the guards, before and after, for the trusted side's own check */
        memcpy(d->text + CKI_TEXT / 2, g_mem.scratch - CKI_SCRATCH_GUARD, CKI_SCRATCH_GUARD);
        memcpy(d->text + CKI_TEXT / 2 + CKI_SCRATCH_GUARD, g_mem.scratch + g_mem.asked, CKI_SCRATCH_GUARD);
    }
    fflush(stdout);
    send_msg(d);
}

static void reply(cki_msg *r) { r->kind = CKI_REPLY; send_msg(r); }

static void count(cki_msg *m)
{
    const ck_algo *a = algo_of(m);
    const ck_count_fn fns[CKI_NUM_COUNT_FNS] = {a->bytes_sent, a->msgs_sent, a->max_msg_bytes, a->empty_msgs};
    if (m->c < 0 || m->c >= CKI_NUM_COUNT_FNS || !fns[m->c]) die("a count the algorithm does not have");
    const ck_config cfg = m->cfg;
    cki_msg *r = request(CKI_REPLY);
    r->x[0] = fns[m->c](m->a, m->b, (size_t)m->x[0], (size_t)m->x[1], &cfg);
    reply(r);
}

static void cost(cki_msg *m)
{
    const ck_algo *a = algo_of(m);
    if (!a->cost) die("a cost the algorithm does not have");
    const ck_cost_params p = {m->f[0], m->f[1], m->f[2], m->f[3]};
    double n;
    memcpy(&n, &m->x[0], sizeof n);
    cki_msg *r = request(CKI_REPLY);
    r->f[0] = a->cost(&p, m->a, n);
    reply(r);
}

static void diagnose(cki_msg *m)
{
    const ck_algo *a = algo_of(m);
    if (!a->diagnose) die("a diagnosis the algorithm does not have");
    const ck_config cfg = m->cfg;
    const ck_fault f = {.p = m->a, .rank = m->b, .count = (size_t)m->x[0], .elem = (size_t)m->x[1],
                        .esize = (size_t)m->x[2], .missing = m->c, .doubled = m->d, .cfg = &cfg};
    cki_msg *r = request(CKI_REPLY);
    a->diagnose(&f, r->text, sizeof r->text);
    r->text[sizeof r->text - 1] = '\0';
    reply(r);
}

/* ------------------------------------------------------------ confinement */

#if defined(__x86_64__)
#define CKI_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CKI_ARCH AUDIT_ARCH_AARCH64
#endif

#define LD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET(SECCOMP_RET_ALLOW)
/* call nr allowed unless argument arg has one of bits (then EPERM): five instructions */
#define ALLOW_UNLESS(nr, arg, bits)                                                                    \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), LD(offsetof(struct seccomp_data, args[arg])), \
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (bits), 0, 1), RET(SECCOMP_RET_ERRNO | EPERM), RET(SECCOMP_RET_ALLOW)
/* call nr allowed when argument arg is v (this process), EPERM otherwise */
#define ALLOW_IF(nr, arg, v)                                                                           \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), LD(offsetof(struct seccomp_data, args[arg])), \
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (v), 0, 1), RET(SECCOMP_RET_ALLOW), RET(SECCOMP_RET_ERRNO | EPERM)

/* What the runtime, the C library's memory, stdio, assert and abort need;
 * everything else fails with EPERM (another ABI: the process is killed). */
static int confine(void)
{
#ifdef CKI_ARCH
    const uint32_t self = (uint32_t)getpid();
    struct sock_filter f[] = {
        LD(offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CKI_ARCH, 1, 0),
        RET(SECCOMP_RET_KILL_PROCESS),
        LD(offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1), RET(SECCOMP_RET_KILL_PROCESS),   /* x32 */
#endif
        ALLOW(__NR_read), ALLOW(__NR_write), ALLOW(__NR_readv), ALLOW(__NR_writev), ALLOW(__NR_close),
        ALLOW(__NR_lseek), ALLOW(__NR_fstat), ALLOW(__NR_newfstatat), ALLOW(__NR_brk), ALLOW(__NR_munmap),
        ALLOW(__NR_mremap), ALLOW(__NR_madvise), ALLOW(__NR_futex), ALLOW(__NR_getrandom),
        ALLOW(__NR_clock_gettime), ALLOW(__NR_clock_nanosleep), ALLOW(__NR_nanosleep), ALLOW(__NR_sched_yield),
        ALLOW(__NR_rt_sigprocmask), ALLOW(__NR_rt_sigaction), ALLOW(__NR_rt_sigreturn), ALLOW(__NR_getpid),
        ALLOW(__NR_gettid), ALLOW(__NR_exit), ALLOW(__NR_exit_group),
        ALLOW_UNLESS(__NR_mmap, 2, PROT_EXEC), ALLOW_UNLESS(__NR_mprotect, 2, PROT_EXEC),
        ALLOW_IF(__NR_tgkill, 0, self), ALLOW_IF(__NR_kill, 0, self),
        RET(SECCOMP_RET_ERRNO | EPERM),
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof f / sizeof f[0]), .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
    return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ? -1 : 0;
#else
    return -1;
#endif
}

/* ------------------------------------------------------------ main */

/* The region: argv[1] its bytes, argv[2] the part the call's buffers take. */
static void map_region(int argc, char **argv)
{
    if (argc != 3) die("usage: NAME.algo REGION_BYTES IO_BYTES (started by the trusted program, not by hand)");
    g_bytes = strtoull(argv[1], NULL, 10);
    g_io = strtoull(argv[2], NULL, 10);
    if (!g_bytes || g_io >= g_bytes) die("a region of no size");
    void *p = mmap(NULL, g_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, CKI_REGION_FD, 0);
    if (p == MAP_FAILED) die("cannot map the shared region");
    close(CKI_REGION_FD);
    g_base = p;
    const size_t heap = g_bytes - g_io, half = heap / 2 & ~(size_t)63;
    g_mem.scratch = g_base + g_io + CKI_SCRATCH_GUARD;
    g_mem.scratch_cap = half - 2 * CKI_SCRATCH_GUARD;
    g_mem.stage_base = g_mem.stage_at = g_io + half;
    g_mem.stage_end = g_bytes;
}

int main(int argc, char **argv)
{
    map_region(argc, argv);
    catch_faults();
    if (confine()) die("this system cannot confine the process (seccomp)");
    announce();
    for (;;) {
        cki_msg m;
        recv_msg(&m);
        switch (m.kind) {
        case CKI_RUN: run(&m); break;
        case CKI_COUNT: count(&m); break;
        case CKI_COST: cost(&m); break;
        case CKI_DIAGNOSE: diagnose(&m); break;
        default: die("an unknown request");
        }
    }
}
