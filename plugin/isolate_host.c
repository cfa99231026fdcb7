/*
 * isolate_host.c — the graded algorithm alone in its own process
 * (COLLKIT_ISOLATE=1: the grader's runs of the checker and the benchmark).
 *
 * In the program collkit-cc builds around a student's file, the file's
 * object shares the process with everything that grades it: the library's
 * algorithms, MPI, the traffic counters, the benchmark's clock, the
 * transport's function pointers — all reachable by address from the file's
 * code. Isolated, the rank process is collkit-host, a program built from
 * trusted sources only (this file, main.c, the tools), and the file runs in
 * NAME.algo: its object, the minimal runtime of collkit_algo.h
 * (collectives/src/isolate_rt.c) and the C library, confined by seccomp.
 * This side registers a proxy for each of its algorithms, hands the call's
 * buffers over in a region of shared memory, carries each send and receive
 * over the real transport (so the real counters count them, the real
 * watchdog bounds them), and reads the output back; the benchmark's clock
 * runs here, around the whole call. The reference a speed part times runs
 * the same way (collkit-ref.algo: the library's host algorithms on the same
 * runtime), so the comparison pays the channel's cost on both sides.
 * Between calls each child is stopped (SIGSTOP): code of the file cannot run
 * beside the reference's timed calls by faking the end of its own.
 *
 * The diagnoses are the library's: a request left posted, a receive of the
 * wrong size, the watchdog, writes outside the scratch space are found by
 * the trusted communicator, on the requests this side posted for the child.
 *
 * In the program a student builds (main.c), plugin_isolate only hands over
 * to collkit-host when COLLKIT_ISOLATE=1 names the tool's run as one to
 * isolate (check, bench); otherwise the file runs in process, debuggable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "collkit_algo.h"
#include "collkit_isolate.h"

extern char **environ;
void plugin_isolate(int argc, char **argv);   /* main.c */

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "collkit: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

/* The tools whose runs the grader isolates. */
static int isolated_tool(int argc, char **argv)
{
    const char *e = getenv("COLLKIT_ISOLATE");
    return e && !strcmp(e, "1") && argc > 1 && (!strcmp(argv[1], "check") || !strcmp(argv[1], "bench"));
}

#ifndef COLLKIT_PLUGIN_HOST
/* ------------------------------------------------------------ the student's program: hand over */

void plugin_isolate(int argc, char **argv)
{
#ifdef COLLKIT_PLUGIN_ISOLATE
    extern const char plugin_host_exe[], plugin_algo_exe[];   /* NAME.isolate_paths.c, generated */
    if (!isolated_tool(argc, argv)) return;
    /* Nothing of the file has run but its registration: start again as the
     * trusted program, which starts the file's own. */
    if (setenv("COLLKIT_ISOLATE_ALGO", plugin_algo_exe, 1)) die("%s", strerror(errno));
    execv(plugin_host_exe, argv);
    die("COLLKIT_ISOLATE=1, and the trusted program cannot start: %s", strerror(errno));
#else
    if (isolated_tool(argc, argv)) die("COLLKIT_ISOLATE=1: %s was built without its isolated programs", argv[0]);
#endif
}

#else
/* ------------------------------------------------------------ the trusted program */

typedef struct child {
    pid_t   pid;
    int     sock;
    char   *base;          /* the shared region, mapped here too */
    size_t  bytes, io;     /* its size; the part a call's buffers take */
    ck_req *reqs;          /* the requests posted for it: CKI_MAX_REQS slots */
    ck_algo key;           /* marks the communicators it has run on (ck_algo_state) */
    int     failed;        /* a post of this call that failed, unanswered: its status */
    char    why[512];      /* and the library's message */
} child;

#define NSLOTS 32
typedef struct slot {
    child  *ch;
    int     idx;           /* the descriptor's index in its child */
    ck_algo desc;          /* the proxy the registry holds */
    char    text[CKI_TEXT];
} slot;

static child g_student, g_refs;
static slot  g_slot[NSLOTS];
static int   g_nslots;

/* ------------------------------------------------------------ the child process */

static int high_fd(int fd)
{
    int h = fcntl(fd, F_DUPFD, 64);
    return h < 0 ? fd : h;
}

/* The region: COLLKIT_ISOLATE_MB (default 2048), and within the file size
 * limit (a memfd is a file): half for a call's buffers, half for scratch. */
static size_t region_bytes(void)
{
    const char *e = getenv("COLLKIT_ISOLATE_MB");
    size_t b = (size_t)(e && atol(e) > 0 ? atol(e) : 2048) << 20;
    struct rlimit rl;
    if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < b) b = rl.rlim_cur;
    return b & ~(size_t)4095;
}

static void exec_child(const child *ch, const char *exe, int sock, int mem)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sock = high_fd(sock), mem = high_fd(mem);
    if (dup2(sock, CKI_SOCK_FD) < 0 || dup2(mem, CKI_REGION_FD) < 0) _exit(127);
    for (int fd = CKI_REGION_FD + 1; fd < 1024; fd++) close(fd);
    char bytes[32], io[32];
    snprintf(bytes, sizeof bytes, "%zu", ch->bytes);
    snprintf(io, sizeof io, "%zu", ch->io);
    /* The environment goes along (a file reads it as it would in process;
     * the grader marks the run's processes there); the arguments do not. */
    char *const args[] = {(char *)exe, bytes, io, NULL};
    execve(exe, args, environ);
    fprintf(stderr, "collkit: cannot start %s: %s\n", exe, strerror(errno));
    _exit(127);
}

static void spawn(child *ch, const char *exe)
{
    int sv[2];
    ch->bytes = region_bytes();
    ch->io = ch->bytes / 2 & ~(size_t)4095;
    int mem = memfd_create("collkit-isolate", MFD_CLOEXEC);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) || mem < 0 || ftruncate(mem, (off_t)ch->bytes))
        die("cannot make the isolated algorithm's channel: %s", strerror(errno));
    ch->base = mmap(NULL, ch->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mem, 0);
    ch->reqs = calloc(CKI_MAX_REQS, sizeof *ch->reqs);
    if (ch->base == MAP_FAILED || !ch->reqs) die("cannot map the isolated algorithm's region: %s", strerror(errno));
    fflush(NULL);
    if ((ch->pid = fork()) < 0) die("cannot start the isolated algorithm: %s", strerror(errno));
    if (ch->pid == 0) exec_child(ch, exe, sv[1], mem);
    close(sv[1]);
    close(mem);
    ch->sock = sv[0];
}

static void stop(child *ch) { kill(ch->pid, SIGSTOP); }
static void resume(child *ch) { kill(ch->pid, SIGCONT); }

/* The child ended in the middle of a call: this process ends the way it
 * did (its exit status, its signal), as the program did with the file in it. */
static void child_gone(child *ch)
{
    int st = 0;
    while (waitpid(ch->pid, &st, 0) < 0 && errno == EINTR) {}
    fflush(NULL);
    if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        raise(WTERMSIG(st));
        _exit(128 + WTERMSIG(st));
    }
    exit(WIFEXITED(st) ? WEXITSTATUS(st) : 2);
}

static void broken(child *ch, const char *why)
{
    fprintf(stderr, "collkit: the isolated algorithm's process broke its channel: %s\n", why);
    kill(ch->pid, SIGKILL);
    child_gone(ch);
}

static void send_to(child *ch, cki_msg *m)
{
    if (send(ch->sock, m, sizeof *m, MSG_NOSIGNAL) != (ssize_t)sizeof *m) child_gone(ch);   /* (no SIGPIPE) */
}

static void recv_from(child *ch, cki_msg *m)
{
    ssize_t n;
    while ((n = read(ch->sock, m, sizeof *m)) < 0 && errno == EINTR) {}
    if (n <= 0) child_gone(ch);
    if (n != (ssize_t)sizeof *m) broken(ch, "a message cut short");
}

/* One question to a stopped child, one answer. */
static void ask(child *ch, cki_msg *m)
{
    resume(ch);
    send_to(ch, m);
    recv_from(ch, m);
    stop(ch);
    if (m->kind != CKI_REPLY) broken(ch, "an answer out of turn");
}

static void stop_children(void)
{
    child *all[] = {&g_student, &g_refs};
    for (int i = 0; i < 2; i++)
        if (all[i]->pid > 0) {
            close(all[i]->sock);   /* end of its channel: it flushes its output and ends */
            resume(all[i]);
            waitpid(all[i]->pid, NULL, 0);
            all[i]->pid = 0;
        }
}

/* ------------------------------------------------------------ serving a call */

/* Phases stay valid after the call, as the library keeps the pointer. */
static const char *intern(const char *s)
{
    static char *seen[256];
    static int n;
    for (int i = 0; i < n; i++)
        if (!strcmp(seen[i], s)) return seen[i];
    if (n == 256) return "(phase)";
    return (seen[n] = strdup(s)) ? seen[n++] : "(phase)";
}

static void answer(child *ch, ck_comm *c, cki_msg *m, int rc)
{
    m->kind = CKI_REPLY;
    m->a = rc;
    snprintf(m->text, sizeof m->text, "%s", rc ? ck_comm_errmsg(c) : "");
    send_to(ch, m);
}

/* A post, in the slot the child chose; its failure (the first of the call)
 * is kept for the next wait, unanswered. */
static void serve_post(child *ch, ck_comm *c, const cki_msg *m)
{
    const uint64_t off = m->x[0], bytes = m->x[1];
    if (bytes > ch->bytes || off > ch->bytes - bytes) broken(ch, "a buffer outside the region");
    if (m->d < 0 || m->d >= CKI_MAX_REQS) broken(ch, "a request slot out of range");
    char *buf = ch->base + off;
    ck_req *r = &ch->reqs[m->d];
    int rc = m->a ? ck_isend(c, buf, bytes, m->b, m->c, r) : ck_irecv(c, buf, bytes, m->b, m->c, r);
    if (rc && !ch->failed) {
        ch->failed = rc;
        snprintf(ch->why, sizeof ch->why, "%s", ck_comm_errmsg(c));
    }
}

/* The failure of a post, now that the child waits or returns. */
static int post_failure(child *ch, ck_comm *c)
{
    int rc = ch->failed;
    ch->failed = 0;
    return rc ? ck_fail(c, rc, "%s", ch->why) : CK_SUCCESS;
}

/* The requests waited for where they lie (the library knows them by
 * address); the shared-memory transport, which moves a message only while
 * it is polled, waits for them all together. */
static void serve_wait(child *ch, ck_comm *c, cki_msg *m)
{
    const int n = m->a;
    if (n < 0 || n > CKI_MAX_WAIT) broken(ch, "a wait for too many requests");
    for (int i = 0; i < n; i++)
        if (m->slots[i] >= CKI_MAX_REQS) broken(ch, "a wait for a request never posted");
    int rc = post_failure(ch, c);
    if (rc) {
        answer(ch, c, m, rc);
        return;
    }
    if (strcmp(ck_comm_transport_name(c), "shm")) {
        for (int i = 0; i < n && !rc; i++) rc = ck_wait(c, &ch->reqs[m->slots[i]]);
    } else {
        ck_req all[CKI_MAX_WAIT];
        for (int i = 0; i < n; i++) all[i] = ch->reqs[m->slots[i]];
        rc = ck_waitall(c, all, n);
        for (int i = 0; i < n; i++) ch->reqs[m->slots[i]] = all[i];
    }
    answer(ch, c, m, rc);
}

/* The child's scratch guards, as it left them, on this communicator's own
 * scratch of the size it asked for: the library's check names a write
 * outside it exactly as it does in process. */
static void mirror_scratch(ck_comm *c, const cki_msg *m)
{
    const size_t g = CKI_SCRATCH_GUARD;
    unsigned char *s = ck_scratch(c, (size_t)m->x[0]);
    if (!s) return;
    memcpy(s - g, m->text + CKI_TEXT / 2, g);
    memcpy(s + m->x[0], m->text + CKI_TEXT / 2 + g, g);
}

static int serve(child *ch, ck_comm *c, cki_msg *m)
{
    for (;;) {
        recv_from(ch, m);
        switch (m->kind) {
        case CKI_POST: serve_post(ch, c, m); break;
        case CKI_WAIT: serve_wait(ch, c, m); break;
        case CKI_STEP: m->text[63] = '\0'; ck_step(c, m->a, m->b ? intern(m->text) : NULL); break;
        case CKI_TRAFFIC: ck_count_traffic(c, m->x[0], m->x[1], m->x[2], m->x[3]); break;
        case CKI_DONE:
            if (ch->failed && !m->a) m->a = post_failure(ch, c);   /* a post never waited for */
            if (m->b) m->text[CKI_TEXT / 2 - 1] = '\0', ck_fail(c, m->a, "%s", m->text);
            if (m->c && m->x[0] <= ch->bytes) mirror_scratch(c, m);
            return m->a;
        default: broken(ch, "an unknown request");
        }
    }
}

/* ------------------------------------------------------------ the proxies */

/* A buffer of the call in the region, with up to CKI_SCRATCH_GUARD bytes on
 * each side of it (as far as its own pages go: never a read that could
 * fault): a write just outside the buffer reaches the caller's memory there,
 * as it would in process (the checker's guards see it). */
typedef struct piece {
    char  *at;             /* the caller's buffer */
    size_t bytes, off;     /* its size; where it lies in the region */
    size_t before, after;  /* the bytes beside it that travel with it */
    char   was[2][CKI_SCRATCH_GUARD];   /* those bytes as they went in */
} piece;

typedef struct span {
    piece  p[2];           /* the input, the output; in place (overlapping): one piece, p[0] */
    int    n;
    size_t total;
} span;

static int g_probe[2] = {-1, -1};   /* a pipe: writing from an address says whether it can be read */

/* Whether n bytes at p can be read, without a fault: a write from memory
 * that cannot be read fails (EFAULT) instead. */
static int readable(const char *p, size_t n)
{
    char sink[CKI_SCRATCH_GUARD];
    if (g_probe[0] < 0 || write(g_probe[1], p, n) != (ssize_t)n) return 0;
    return read(g_probe[0], sink, n) == (ssize_t)n;
}

/* Up to CKI_SCRATCH_GUARD bytes each side, within the buffer's own pages or
 * where the next page (or the one before) can be read. */
static void margins(piece *q)
{
    const uintptr_t a = (uintptr_t)q->at, e = a + q->bytes, page = 4096, g = CKI_SCRATCH_GUARD;
    q->before = q->after = 0;
    if (!q->bytes) return;
    q->before = (a & (page - 1)) >= g || readable(q->at - g, g) ? g : (a & (page - 1));
    q->after = page - (e & (page - 1)) >= g || readable(q->at + q->bytes, g) ? g : (page - (e & (page - 1))) & (page - 1);
}

/* Where the call's buffers go in the region: overlapping ones (in place, a
 * block of the other) as one piece, so they keep their distance. */
static int lay_out(span *s, const char *send, size_t sbytes, char *recv, size_t rbytes, size_t room)
{
    const int shared = sbytes && rbytes && send < recv + rbytes && recv < send + sbytes;
    if (shared) {
        const char *lo = send < recv ? send : recv;
        const char *hi = send + sbytes > recv + rbytes ? send + sbytes : recv + rbytes;
        s->p[0] = (piece){.at = (char *)lo, .bytes = (size_t)(hi - lo)};
        s->n = 1;
    } else {
        s->p[0] = (piece){.at = (char *)send, .bytes = sbytes};
        s->p[1] = (piece){.at = recv, .bytes = rbytes};
        s->n = 2;
    }
    size_t at = 0;
    for (int i = 0; i < s->n; i++) {
        margins(&s->p[i]);
        s->p[i].off = at + CKI_SCRATCH_GUARD;
        at = (s->p[i].off + s->p[i].bytes + CKI_SCRATCH_GUARD + 63) & ~(size_t)63;
    }
    s->total = at;
    return at <= room ? 0 : -1;
}

static void copy_in(span *s, char *base)
{
    for (int i = 0; i < s->n; i++) {
        piece *q = &s->p[i];
        if (!q->bytes) continue;
        memcpy(base + q->off - q->before, q->at - q->before, q->before + q->bytes + q->after);
        memcpy(q->was[0], q->at - q->before, q->before);
        memcpy(q->was[1], q->at + q->bytes, q->after);
    }
}

static void copy_back(char *to, const char *from, size_t bytes)
{
    if (bytes && memcmp(to, from, bytes)) memcpy(to, from, bytes);
}

/* How many of the bytes beside a buffer the algorithm wrote: they are never
 * written back (the caller's memory there is not the call's), the call
 * fails instead. */
static size_t overrun(const char *region, const char *was, size_t bytes, int after)
{
    size_t n = 0;
    for (size_t k = 0; k < bytes; k++)
        if (region[k] != was[k]) n = after ? k + 1 : bytes - k > n ? bytes - k : n;
    return n;
}

/* The output; the input only where the algorithm wrote it (it may not,
 * outside in place): the checker then sees what it would in process. The
 * input's pages the child kept unwritten ([clean, clean_end) of the region)
 * need no comparing. */
static void copy_out(const span *s, const char *base, size_t clean, size_t clean_end)
{
    for (int i = 0; i < s->n; i++) {
        const piece *q = &s->p[i];
        if (!q->bytes) continue;
        if (i == s->n - 1) memcpy(q->at, base + q->off, q->bytes);
        else if (clean < clean_end && clean >= q->off && clean_end <= q->off + q->bytes) {
            copy_back(q->at, base + q->off, clean - q->off);
            copy_back(q->at + (clean_end - q->off), base + clean_end, q->off + q->bytes - clean_end);
        } else copy_back(q->at, base + q->off, q->bytes);
    }
}

/* A write beside the call's buffers, named as the checker's guards would. */
static int check_margins(ck_comm *c, const slot *sl, const span *s, const char *base, int rc)
{
    for (int i = 0; i < s->n && !rc; i++) {
        const piece *q = &s->p[i];
        const char *what = s->n == 1 || i == 1 ? "recvbuf" : "sendbuf";
        const size_t b = overrun(base + q->off - q->before, q->was[0], q->before, 0);
        const size_t a = overrun(base + q->off + q->bytes, q->was[1], q->after, 1);
        if (a || b)
            rc = ck_fail(c, CK_ERR_PROTOCOL, "algorithm '%s' wrote outside %s: %zu B %s (rank %d)", sl->desc.name,
                         what, a ? a : b, a ? "past its end" : "before its start", ck_comm_rank(c));
    }
    return rc;
}

static int proxy_run(slot *sl, ck_comm *c, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    child *ch = sl->ch;
    if (ck_comm_mem(c) & CK_MEM_CUDA)
        return ck_fail(c, CK_ERR_UNSUPPORTED, "an isolated algorithm (COLLKIT_ISOLATE=1) runs on host buffers only");
    const size_t es = ck_dtype_size(dt);
    size_t off, len;
    ck_block(count, (size_t)ck_comm_size(c), (size_t)ck_comm_rank(c), &off, &len);
    size_t sbytes = count * es, rbytes = count * es;
    if (sl->desc.coll == CK_COLL_REDUCE_SCATTER) rbytes = len * es;
    if (sl->desc.coll == CK_COLL_ALLGATHER) sbytes = len * es;
    span s;
    if (lay_out(&s, sendbuf, sbytes, recvbuf, rbytes, ch->io))
        return ck_fail(c, CK_ERR_NOMEM, "the call's buffers (%zu B) exceed the isolated run's region (%zu B; "
                       "COLLKIT_ISOLATE_MB, the file size limit)", s.total, ch->io);
    cki_msg m;
    memset(&m, 0, offsetof(cki_msg, slots));
    if (!ck_algo_state(c, &ch->key)) {   /* a communicator it never ran on: fresh scratch and state */
        ck_algo_state_set(c, &ch->key, ch, NULL);
        m.f[0] = 1;
    }
    copy_in(&s, ch->base);
    m.kind = CKI_RUN, m.algo = sl->idx;
    m.a = ck_comm_rank(c), m.b = ck_comm_size(c), m.c = (int32_t)dt, m.d = (int32_t)op;
    /* (in place: the one piece holds both, at their distance) */
    const char *in = sendbuf, *out = recvbuf;
    m.x[0] = count, m.x[3] = ck_comm_mem(c);
    m.x[1] = s.n == 1 ? s.p[0].off + (size_t)(in - s.p[0].at) : s.p[0].off;
    m.x[2] = s.n == 1 ? s.p[0].off + (size_t)(out - s.p[0].at) : s.p[1].off;
    m.f[1] = s.n == 1 ? 0 : (double)s.p[0].bytes;
    m.cfg = *ck_comm_config(c);
    snprintf(m.text, sizeof m.text, "%s", ck_comm_transport_name(c));
    ch->failed = 0;
    resume(ch);
    send_to(ch, &m);
    int rc = serve(ch, c, &m);
    stop(ch);
    copy_out(&s, ch->base, (size_t)m.x[1], (size_t)m.x[2]);
    return check_margins(c, sl, &s, ch->base, rc);
}

static uint64_t proxy_count(slot *sl, int fn, int p, int rank, size_t count, size_t es, const ck_config *cfg)
{
    cki_msg m;
    memset(&m, 0, offsetof(cki_msg, slots));
    m.kind = CKI_COUNT, m.algo = sl->idx, m.a = p, m.b = rank, m.c = fn;
    m.x[0] = count, m.x[1] = es;
    if (cfg) m.cfg = *cfg;
    ask(sl->ch, &m);
    return m.x[0];
}

static double proxy_cost(slot *sl, const ck_cost_params *mp, int p, double n)
{
    cki_msg m;
    memset(&m, 0, offsetof(cki_msg, slots));
    m.kind = CKI_COST, m.algo = sl->idx, m.a = p;
    m.f[0] = mp->alpha, m.f[1] = mp->beta, m.f[2] = mp->gamma, m.f[3] = mp->chunk;
    memcpy(&m.x[0], &n, sizeof n);
    ask(sl->ch, &m);
    return m.f[0];
}

static void proxy_diagnose(slot *sl, const ck_fault *f, char *out, size_t cap)
{
    cki_msg m;
    memset(&m, 0, offsetof(cki_msg, slots));
    m.kind = CKI_DIAGNOSE, m.algo = sl->idx, m.a = f->p, m.b = f->rank, m.c = f->missing, m.d = f->doubled;
    m.x[0] = f->count, m.x[1] = f->elem, m.x[2] = f->esize;
    if (f->cfg) m.cfg = *f->cfg;
    ask(sl->ch, &m);
    m.text[sizeof m.text - 1] = '\0';
    if (cap) snprintf(out, cap, "%s", m.text);
}

/* Each slot's functions: a descriptor's members take no context. */
#define SLOT_FNS(i)                                                                                              \
    static int run_##i(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)                     \
    { return proxy_run(&g_slot[i], c, s, r, n, dt, op); }                                                        \
    static uint64_t bytes_##i(int p, int k, size_t n, size_t es, const ck_config *cfg)                          \
    { return proxy_count(&g_slot[i], CKI_F_BYTES, p, k, n, es, cfg); }                                          \
    static uint64_t msgs_##i(int p, int k, size_t n, size_t es, const ck_config *cfg)                           \
    { return proxy_count(&g_slot[i], CKI_F_MSGS, p, k, n, es, cfg); }                                           \
    static uint64_t maxmsg_##i(int p, int k, size_t n, size_t es, const ck_config *cfg)                         \
    { return proxy_count(&g_slot[i], CKI_F_MAX_MSG, p, k, n, es, cfg); }                                        \
    static uint64_t empty_##i(int p, int k, size_t n, size_t es, const ck_config *cfg)                          \
    { return proxy_count(&g_slot[i], CKI_F_EMPTY, p, k, n, es, cfg); }                                          \
    static double cost_##i(const ck_cost_params *m, int p, double n) { return proxy_cost(&g_slot[i], m, p, n); } \
    static void diag_##i(const ck_fault *f, char *out, size_t cap) { proxy_diagnose(&g_slot[i], f, out, cap); }
#define SLOT_ENTRY(i) {run_##i, {bytes_##i, msgs_##i, maxmsg_##i, empty_##i}, cost_##i, diag_##i},
#define SLOTS(X)                                                                                                 \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18)     \
    X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
SLOTS(SLOT_FNS)
static const struct {
    ck_allreduce_fn run;
    ck_count_fn     count[CKI_NUM_COUNT_FNS];
    ck_cost_fn      cost;
    ck_diagnose_fn  diagnose;
} g_fns[NSLOTS] = {SLOTS(SLOT_ENTRY)};

/* ------------------------------------------------------------ registration */

/* The next of the child's descriptors as a proxy in a new slot, or NULL at
 * the end of its list. *file: where the child says it was registered. */
static slot *next_proxy(child *ch, const char **file)
{
    cki_msg m;
    recv_from(ch, &m);
    if (m.kind == CKI_ALGOS_END) return NULL;
    if (m.kind != CKI_ALGO || g_nslots == NSLOTS) broken(ch, "a descriptor out of turn, or too many");
    const int i = g_nslots++;
    slot *s = &g_slot[i];
    s->ch = ch, s->idx = m.algo;
    memcpy(s->text, m.text, sizeof s->text);
    s->text[sizeof s->text - 1] = '\0';
    const char *str[5], *at = s->text;
    for (int k = 0; k < 5; k++, at += strlen(at) + (at < s->text + sizeof s->text - 1)) str[k] = at;
    const int has = m.d;
    s->desc = (ck_algo){.name = str[0], .summary = has & CKI_HAS_SUMMARY ? str[1] : NULL, .mem = (unsigned)m.a,
                        .flags = (unsigned)m.b, .bytes_formula = has & CKI_HAS_BYTES_FORMULA ? str[2] : NULL,
                        .cost_formula = has & CKI_HAS_COST_FORMULA ? str[3] : NULL, .coll = (ck_coll)m.c,
                        .run = has & CKI_HAS_RUN ? g_fns[i].run : NULL,
                        .cost = has & CKI_HAS_COST ? g_fns[i].cost : NULL,
                        .diagnose = has & CKI_HAS_DIAGNOSE ? g_fns[i].diagnose : NULL};
    ck_count_fn *counts[CKI_NUM_COUNT_FNS] = {&s->desc.bytes_sent, &s->desc.msgs_sent, &s->desc.max_msg_bytes,
                                              &s->desc.empty_msgs};
    for (int f = 0; f < CKI_NUM_COUNT_FNS; f++) *counts[f] = has & (CKI_HAS_COUNT << f) ? g_fns[i].count[f] : NULL;
    *file = str[4];
    return s;
}

/* The file's algorithms: proxies under their names, registered as the
 * file's own line would (a name taken stops the program, named). */
static void register_student(void)
{
    const char *file;
    for (slot *s; (s = next_proxy(&g_student, &file));) ck_register_algo_or_exit(&s->desc, file);
}

/* The references: each built-in the reference program also holds runs
 * there; everything else about it (counts, cost, diagnosis) is the
 * library's own descriptor's. */
static void register_refs(void)
{
    const char *file;
    for (slot *s; (s = next_proxy(&g_refs, &file));) {
        const ck_algo *b = ck_coll_algo_find(s->desc.coll, s->desc.name);
        if (!b || !(b->mem & CK_MEM_HOST)) continue;
        ck_allreduce_fn run = s->desc.run;
        s->desc = *b;
        s->desc.run = run;
        ck_replace_algo(&s->desc);
    }
}

/* collkit-ref.algo, beside this program. */
static const char *refs_exe(void)
{
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    char *slash = n > 0 ? memrchr(path, '/', (size_t)n) : NULL;
    if (!slash) die("cannot find the reference program beside %s", "collkit-host");
    strcpy(slash + 1, "collkit-ref.algo");
    return path;
}

void plugin_isolate(int argc, char **argv)
{
    const char *exe = getenv("COLLKIT_ISOLATE_ALGO");
    if (!isolated_tool(argc, argv) || !exe)
        die("%s is the trusted side of an isolated run: a program collkit-cc built starts it (COLLKIT_ISOLATE=1, "
            "tools check and bench)", argv[0]);
    if (pipe2(g_probe, O_CLOEXEC | O_NONBLOCK)) g_probe[0] = g_probe[1] = -1;
    /* Before MPI starts: a process made later would carry what MPI holds. */
    spawn(&g_student, exe);
    atexit(stop_children);
    register_student();
    stop(&g_student);
    if (strcmp(argv[1], "bench")) return;   /* the checker runs no reference */
    spawn(&g_refs, refs_exe());
    register_refs();
    stop(&g_refs);
}
#endif
