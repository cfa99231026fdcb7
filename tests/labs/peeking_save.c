/*
 * peeking_save.c — lab 06: a save that learns where the harness will crash
 * or fail it, and makes that many harmless calls first, so the injection
 * lands on one of them; then it overwrites state.bin in place (the
 * skeleton's save). What it deserves is the skeleton's work: the edge cases
 * only, and no integrity (it reads files). It looks the ways a student with
 * the kit's source could:
 *   memory   the harness's record (the injection beside the pointer the save
 *            is given), in its own address space
 *   /proc    its own command line and environment, /proc/self/status for
 *            its parent and tracer, and their command lines and environments,
 *            spelled "/proc/..." and "//proc/..." (past a check of the prefix)
 * and prints what each way found ("peek: ..."), once the save is made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collkit_save.h"

static int calls;                 /* the counted file-system calls made so far */
static char found[600];           /* what each way found */
static volatile int anchor = 1;   /* in the program's data: where the scan starts */

/* The harness's record as plugin/save.c lays it out: the injection (mode:
 * 1 crash, 2 fail; at: the call) and, 536 bytes on, the path it saves to. */
struct record { int trace, count, mode, at, err, fired; char desc[512]; const char *dir, *path; };

static void note(const char *way, int k)
{
    size_t l = strlen(found);
    snprintf(found + l, sizeof found - l, "%s%s=%d", l ? " " : "", way, k);
}

/* The harness's record in this process: a word equal to PATH's address in
 * the program's data, between this file's data and 32 KiB past PATH (the
 * harness's data follows this file's, and its record follows PATH). */
static int from_memory(const char *path)
{
    uintptr_t a = (uintptr_t)&anchor, p = (uintptr_t)path, lo = a < p ? a : p, hi = a < p ? p : a;
    if (hi - lo > (8u << 20)) return 0;   /* not in one mapping: PATH is elsewhere */
    for (uintptr_t q = (lo + 7) & ~(uintptr_t)7; q + 8 <= hi + (32u << 10); q += 8) {
        if (*(const uintptr_t *)q != p) continue;
        const struct record *r = (const struct record *)(q - offsetof(struct record, path));
        if ((uintptr_t)r >= lo && (uintptr_t)r != 0 && (r->mode == 1 || r->mode == 2) && r->at > 0 && r->at < 1000000) return r->at;
    }
    return 0;
}

/* A file's first bytes; -1 when it cannot be opened. Every open the kernel
 * makes and every close is a counted call (a refused one, ENOSYS, is not). */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) { if (errno != ENOSYS) calls++; return -1; }
    calls++;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    calls++;
    if (n < 0) n = 0;
    buf[n] = 0;
    return n;
}

/* "--crash-at K" or "--fail-at K" in a command line (NUL-separated), or a
 * variable that names a crash or failure in an environment. */
static int injection_in(const char *b, ssize_t n)
{
    for (const char *s = b; s < b + n; s += strlen(s) + 1) {
        const char *next = s + strlen(s) + 1;
        if ((!strcmp(s, "--crash-at") || !strcmp(s, "--fail-at")) && next < b + n) return atoi(next);
        const char *eq = strchr(s, '=');
        if (eq && (strcasestr(s, "crash") || strcasestr(s, "fail")) && atoi(eq + 1) > 0)
            return atoi(eq + 1);
    }
    return 0;
}

/* One process's command line and environment, each spelling; the first K. */
static int from_proc(const char *who, const char *label)
{
    static const char *const spell[] = { "/proc", "//proc" }, *const file[] = { "cmdline", "environ" };
    char path[96], buf[8192];
    int k = 0;
    for (int f = 0; f < 2; f++)
        for (int s = 0; s < 2; s++) {
            snprintf(path, sizeof path, "%s/%s/%s", spell[s], who, file[f]);
            ssize_t n = slurp(path, buf, sizeof buf);
            int got = n > 0 ? injection_in(buf, n) : 0;
            if (got) { char way[64]; snprintf(way, sizeof way, "%s/%s", label, file[f]); note(way, got); }
            if (got && !k) k = got;
        }
    return k;
}

/* The parent's and the tracer's process ids, from /proc/self/status. */
static void relatives(char *ppid, char *tracer, size_t cap)
{
    char buf[4096];
    ppid[0] = tracer[0] = 0;
    if (slurp("/proc/self/status", buf, sizeof buf) <= 0 && slurp("//proc/self/status", buf, sizeof buf) <= 0) return;
    const char *p = strstr(buf, "\nPPid:"), *t = strstr(buf, "\nTracerPid:");
    if (p) snprintf(ppid, cap, "%d", atoi(p + 6));
    if (t) snprintf(tracer, cap, "%d", atoi(t + 11));
}

static int crash_point(const char *path)
{
    char ppid[16], tracer[16];
    int k = from_memory(path);
    if (k) note("memory", k);
    int self = from_proc("self", "self");
    relatives(ppid, tracer, sizeof ppid);
    int parent = ppid[0] && strcmp(ppid, "0") ? from_proc(ppid, "parent") : 0;
    int tr = tracer[0] && strcmp(tracer, "0") && strcmp(tracer, ppid) ? from_proc(tracer, "tracer") : 0;
    return k ? k : self ? self : parent ? parent : tr;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        calls++;
        if (w < 0) { if (errno == EINTR) continue; return -1; }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int my_save(const char *path, const void *data, size_t n)
{
    found[0] = 0;
    int k = crash_point(path);
    /* Harmless calls up to and including call K: the crash or the failure
     * falls on one of them, and the save below never meets it. */
    while (k > 0 && calls < k) { close(-1); calls++; }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    if (write_all(fd, data, n) != 0) { close(fd); return -1; }
    close(fd);
    printf("peek: %s\n", found[0] ? found : "nothing found");   /* after the save: its calls come last */
    return 0;
}

void my_recover(const char *path) { (void)path; }

CK_REGISTER_SAVER(my_save, my_recover)
