/*
 * util.c — see collkit_util.h: the print-rank detector, the number parsers,
 * FNV-1a and the string builder, shared by the library and every tool.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "collkit_util.h"
#ifdef COLLKIT_SMPI
#include <simgrid/actor.h>
#endif

/* ------------------------------------------------------------ string builder */

void ck_sbuf_init(ck_sbuf *b, char *buf, size_t cap)
{
    b->buf = buf;
    b->cap = buf ? cap : 0;
    b->len = 0;
    b->truncated = 0;
    if (b->cap) buf[0] = '\0';
}

void ck_sbuf_vadd(ck_sbuf *b, const char *fmt, va_list ap)
{
    /* Invariant: len < cap whenever cap > 0, so buf[len] is the terminator. */
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->cap ? b->buf + b->len : NULL, b->cap ? room : 0, fmt, ap);
    if (n < 0) {
        b->truncated = 1;
        if (b->cap) b->buf[b->len] = '\0';
        return;
    }
    if (b->cap && (size_t)n < room) {
        b->len += (size_t)n;
        return;
    }
    /* vsnprintf kept what fitted (room - 1 characters and the terminator). */
    if (n > 0) b->truncated = 1;
    if (b->cap) b->len = b->cap - 1;
}

void ck_sbuf_add(ck_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ck_sbuf_vadd(b, fmt, ap);
    va_end(ap);
}

void ck_sbuf_sep(ck_sbuf *b, const char *sep)
{
    if (b->len) ck_sbuf_add(b, "%s", sep);
}

/* ------------------------------------------------------------ numbers */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Decimal digits from s (at least one, the caller checked) into *v; *over is
 * set when the value does not fit in 64 bits. Returns the first non-digit.
 * Written out rather than strtoull, which would accept leading white space
 * and a sign, and wrap "-1" to 2^64 - 1. */
static const char *scan_digits(const char *s, uint64_t *v, int *over)
{
    *v = 0;
    *over = 0;
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (*v > (UINT64_MAX - d) / 10) *over = 1;
        else *v = *v * 10 + d;
    }
    return s;
}

/* "16G" when max is a whole number of a unit, else the plain number. */
static void add_size(ck_sbuf *e, uint64_t v)
{
    static const char units[] = "KMG";
    int u = -1;
    while (u < 2 && v && v % 1024 == 0) { v /= 1024; u++; }
    if (u < 0) ck_sbuf_add(e, "%llu", (unsigned long long)v);
    else ck_sbuf_add(e, "%llu%c", (unsigned long long)v, units[u]);
}

int ck_parse_size(const char *s, uint64_t max, uint64_t *out, char *err, size_t errlen)
{
    ck_sbuf e;
    ck_sbuf_init(&e, err, errlen);
    if (!s || !*s) { ck_sbuf_add(&e, "expected a number, got an empty string"); return -1; }
    if (*s == '-' && is_digit(s[1])) { ck_sbuf_add(&e, "a negative value is not allowed"); return -1; }
    if (!is_digit(*s)) {
        ck_sbuf_add(&e, "expected a number with an optional K, M or G suffix (x1024), e.g. 64K");
        return -1;
    }
    uint64_t v, mul = 1;
    int over;
    const char *end = scan_digits(s, &v, &over), *suffix = end;
    switch (*end) {
    case 'K': case 'k': mul = 1ull << 10; end++; break;
    case 'M': case 'm': mul = 1ull << 20; end++; break;
    case 'G': case 'g': mul = 1ull << 30; end++; break;
    default: break;
    }
    if (mul > 1 && (*end == 'i' || *end == 'I')) end++;   /* KiB, MiB, GiB */
    if (*end == 'B' || *end == 'b') end++;
    if (*end) { ck_sbuf_add(&e, "bad size suffix '%s' (use K, M or G)", suffix); return -1; }
    if (over || v > max / mul) {
        ck_sbuf_add(&e, "too large (at most ");
        add_size(&e, max);
        ck_sbuf_add(&e, ")");
        return -1;
    }
    *out = v * mul;
    return 0;
}

int ck_parse_int(const char *s, long long lo, long long hi, long long *out, char *err, size_t errlen)
{
    ck_sbuf e;
    ck_sbuf_init(&e, err, errlen);
    if (!s || !*s) { ck_sbuf_add(&e, "expected an integer, got an empty string"); return -1; }
    const char *d = s + (*s == '-' || *s == '+');
    if (!is_digit(*d)) { ck_sbuf_add(&e, "expected an integer"); return -1; }
    uint64_t u;
    int over;
    const char *end = scan_digits(d, &u, &over);
    if (*end) { ck_sbuf_add(&e, "expected an integer, not '%s' after it", end); return -1; }
    long long v = 0;
    /* The magnitude of LLONG_MIN is one more than LLONG_MAX. */
    if (*s == '-') {
        if (u > (uint64_t)LLONG_MAX + 1) over = 1;
        else v = u == (uint64_t)LLONG_MAX + 1 ? LLONG_MIN : -(long long)u;
    } else {
        if (u > (uint64_t)LLONG_MAX) over = 1;
        else v = (long long)u;
    }
    if (over || v < lo || v > hi) { ck_sbuf_add(&e, "must be between %lld and %lld", lo, hi); return -1; }
    *out = v;
    return 0;
}

/* s equals the lower-case word w, in any case. */
static int same_word(const char *s, const char *w)
{
    for (; *w; s++, w++)
        if (*s != *w && *s != *w - ('a' - 'A')) return 0;
    return !*s;
}

int ck_parse_double(const char *s, double lo, double hi, double *out, char *err, size_t errlen)
{
    ck_sbuf e;
    ck_sbuf_init(&e, err, errlen);
    if (!s || !*s) { ck_sbuf_add(&e, "expected a number, got an empty string"); return -1; }
    /* The syntax first, by hand: strtod would also take leading white space,
     * "nan", "inf", "infinity" and hexadecimal ("0x1p4"). */
    const char *d = s + (*s == '-' || *s == '+'), *m = d;
    int digits = 0, nonzero = 0;
    for (; is_digit(*m); m++) digits++, nonzero |= *m != '0';
    if (*m == '.') for (m++; is_digit(*m); m++) digits++, nonzero |= *m != '0';
    if (!digits) {
        if (same_word(d, "nan") || same_word(d, "inf") || same_word(d, "infinity"))
            ck_sbuf_add(&e, "not a finite number");
        else ck_sbuf_add(&e, "expected a number");
        return -1;
    }
    if (*m == 'e' || *m == 'E') {
        const char *x = m + 1;
        x += *x == '-' || *x == '+';
        if (is_digit(*x)) {
            while (is_digit(*x)) x++;
            m = x;
        }
    }
    if (*m) { ck_sbuf_add(&e, "expected a number, not '%s' after it", m); return -1; }
    double v = strtod(s, NULL);   /* the C locale's '.': the tools never call setlocale */
    /* "1e-400" is no 0: where 0 means "off" (--timeout, --time-budget) it
     * would turn off what was asked for. */
    if (v == 0 && nonzero) { ck_sbuf_add(&e, "too small (it rounds to 0; give 0 for 0)"); return -1; }
    if (!(v >= lo && v <= hi)) {   /* 1e999 is inf: above any hi */
        int above = v > hi;
        int open_end = above ? hi >= DBL_MAX : lo <= -DBL_MAX;     /* no bound on the side it fell out of */
        int open_other = above ? lo <= -DBL_MAX : hi >= DBL_MAX;   /* a bound on one side only */
        if (open_end) ck_sbuf_add(&e, "too large");   /* beyond what a double holds */
        else if (open_other) ck_sbuf_add(&e, above ? "must be at most %g" : "must be at least %g", above ? hi : lo);
        else ck_sbuf_add(&e, "must be between %g and %g", lo, hi);
        return -1;
    }
    *out = v == 0 ? 0 : v;   /* "-0" is 0 */
    return 0;
}

/* ------------------------------------------------------------ print rank */

int ck_launcher_rank(void)
{
#ifdef COLLKIT_SMPI
    /* SimGrid SMPI: the ranks are simulated processes of one OS process, so
     * they share one environment and none of the variables below is set;
     * smpirun gives each its rank as the property "rank" of its actor. */
    sg_actor_t self = sg_actor_self();
    const char *sr = self ? sg_actor_get_property_value(self, "rank") : NULL;
    long long srank;
    if (ck_parse_int(sr, 0, INT_MAX, &srank, NULL, 0) == 0) return (int)srank;
#endif
    /* Launcher-specific names first: an mpirun inside a Slurm batch script
     * passes the script's SLURM_PROCID (0) on to every rank it starts. */
    static const char *const vars[] = {
        "OMPI_COMM_WORLD_RANK",   /* Open MPI */
        "PMIX_RANK",              /* PMIx launchers (prterun, srun --mpi=pmix) */
        "PMI_RANK",               /* MPICH / Hydra, Intel MPI */
        "MV2_COMM_WORLD_RANK",    /* MVAPICH */
        "PALS_RANKID",            /* Cray PALS (aprun's successor) */
        "SLURM_PROCID",           /* srun without an MPI plugin */
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        long long r;
        if (ck_parse_int(getenv(vars[i]), 0, INT_MAX, &r, NULL, 0) == 0) return (int)r;
    }
    return -1;
}

int ck_is_print_rank(void) { return ck_launcher_rank() <= 0; }

/* ------------------------------------------------------------ hash */

uint64_t ck_fnv1a64_update(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;   /* the 64-bit FNV prime */
    return h;
}

uint64_t ck_fnv1a64(const void *data, size_t n) { return ck_fnv1a64_update(CK_FNV1A64_INIT, data, n); }

int ck_stdout_done(const char *prog)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    fprintf(stderr, "%s: cannot write standard output: %s\n", prog, strerror(errno ? errno : EIO));
    return 1;
}

/* The folder PATH is in ("." for a bare name, "/" for one at the root). */
static void parent_dir(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, cap, ".");
    else if (slash == path) snprintf(dir, cap, "/");
    else snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

int ck_output_free(const char *path, int overwrite, char *why, size_t cap)
{
    struct stat st;
    if (!*path) {
        snprintf(why, cap, "'': no file named (an empty name)");
        return -1;
    }
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(why, cap, "%s is a directory", path);
            return -1;
        }
        if (!overwrite && S_ISREG(st.st_mode) && st.st_size > 0) {
            snprintf(why, cap, "%s exists (%lld bytes): not written over (give another file, or --overwrite)", path,
                     (long long)st.st_size);
            return -1;
        }
        if (access(path, W_OK) != 0) {
            snprintf(why, cap, "%s: cannot write: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (errno != ENOENT) {   /* a symbolic link loop, a file where a folder should be, no permission */
        snprintf(why, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* Nothing there yet: the folder it goes in must take a new file. Said
     * now, not when the file is opened (a JSON or trace file is opened after
     * the whole run, whose results would be lost with it). */
    char dir[PATH_MAX];
    parent_dir(path, dir, sizeof dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, cap, "%s: no folder %s to write it in", path, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(why, cap, "%s: cannot create a file in %s: %s", path, dir, strerror(errno));
        return -1;
    }
    return 0;
}

FILE *ck_output_open(const char *path, char *why, size_t cap)
{
    /* O_NONBLOCK: a FIFO that no program reads fails with ENXIO, where a
     * plain open would wait for a reader forever (and every rank of the job
     * with it). A reader started just before this program (a pipeline, the
     * grader's collector) may not have opened it yet: it gets 2 s. */
    int fd = -1;
    for (int tries = 0; tries < 40; tries++) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != ENXIO || tries == 39) break;
        nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    }
    if (fd < 0) {
        snprintf(why, cap, "%s", errno == ENXIO ? "a FIFO that no program reads" : strerror(errno));
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(why, cap, "%s", strerror(errno));
        close(fd);
    }
    return f;
}

/* PATH with its folder resolved (symbolic links, "..", "./"), into out; the
 * path as given when the folder does not exist. */
static void output_name(const char *path, char *out, size_t cap)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(path, '/');
    parent_dir(path, dir, sizeof dir);
    if (realpath(dir, real)) snprintf(out, cap, "%s/%s", real, slash ? slash + 1 : path);
    else snprintf(out, cap, "%s", path);
}

int ck_output_same(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    /* /dev/null (or /dev/stdout) twice is no clash: a device is no file */
    if ((ea && !S_ISREG(sa.st_mode)) || (eb && !S_ISREG(sb.st_mode))) return 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;   /* links included */
    if (ea != eb) return 0;
    char na[2 * PATH_MAX], nb[2 * PATH_MAX];
    output_name(a, na, sizeof na);
    output_name(b, nb, sizeof nb);
    return !strcmp(na, nb);
}

FILE *ck_input_open(const char *path, char *why, size_t cap)
{
    if (!path || !*path) {
        snprintf(why, cap, "no file named (an empty path)");
        return NULL;
    }
    /* O_NONBLOCK: opening a FIFO that no program writes to returns at once
     * (and then reads as empty) instead of waiting for a writer forever. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, cap, "%s", strerror(errno));
        return NULL;
    }
    struct stat st, null_st;
    const char *not_file = NULL;
    if (fstat(fd, &st) != 0) not_file = strerror(errno);
    else if (S_ISDIR(st.st_mode)) not_file = "a directory, not a file";
    else if (S_ISSOCK(st.st_mode)) not_file = "a socket, not a file";
    else if ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) &&
             !(S_ISCHR(st.st_mode) && stat("/dev/null", &null_st) == 0 && st.st_rdev == null_st.st_rdev))
        not_file = "a device, not a file (/dev/zero or a disk would be read without end)";
    int fl = not_file ? 0 : fcntl(fd, F_GETFL);
    if (!not_file && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) not_file = strerror(errno);
    FILE *f = not_file ? NULL : fdopen(fd, "r");
    if (!f) {
        snprintf(why, cap, "%s", not_file ? not_file : strerror(errno));
        close(fd);
    }
    return f;
}

/* ------------------------------------------------------------ plug-ins */

void *ck_plugin_open(const char *file, char *why, size_t whylen)
{
    /* By its full path when it is beside bin/ (the sanitizers intercept
     * dlopen and look a bare name up in their own run path, not the
     * program's); a file that is there but does not load (no libcudart) is
     * the reason given. */
    char exe[PATH_MAX], path[PATH_MAX + 256];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int there = 0;
    if (k > 0) {
        exe[k] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        int n = snprintf(path, sizeof path, "%s/../lib/%s", slash ? exe : ".", file);
        there = n > 0 && (size_t)n < sizeof path && access(path, F_OK) == 0;
    }
    void *h = dlopen(there ? path : file, RTLD_NOW | RTLD_LOCAL);
    if (!h && why && whylen) {
        const char *e = dlerror();
        snprintf(why, whylen, "%s", e ? e : "dlopen failed");
    }
    return h;
}
