/*
 * fault.c — see collkit_util.h: the one test hook. A test makes a rank stop
 * or die at an exact moment (a phase of the trainer, a step of the shm
 * transport's setup, between the writes of a checkpoint) to show that the
 * job then ends with a message naming the rank, or that a restart resumes.
 * One variable and one table, so that a test names any point the same way.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collkit_util.h"

static const ck_fault_hook hooks[] = {
    {"phase/", 1, "tagtrain entering a phase whose name starts with what follows"},
    {"shm/1", 0, "the shm transport's setup: this rank's segment made"},
    {"shm/2", 0, "the shm transport's setup: every rank's segment made"},
    {"shm/3", 0, "the shm transport's setup: the segment descriptors gathered"},
    {"shm/4", 0, "the shm transport's setup: the peers' segments mapped"},
    {"shm/5", 0, "the shm transport's setup: every rank agreed"},
    {"ckpt/write", 0, "a checkpoint's temporary file, its first array written"},
    {"ckpt/rename", 0, "a checkpoint's temporary file, before the rename into place"},
    {"ckpt/between", 0, "a save, between the best model's file and the last one's"},
    {"ckpt/epoch", 0, "tagtrain, at the end of an epoch's training"},
};
enum { NHOOKS = sizeof hooks / sizeof hooks[0] };

const ck_fault_hook *ck_fault_hooks(size_t *n)
{
    *n = NHOOKS;
    return hooks;
}

/* The table's hook that `name` is, or belongs to (a family's prefix). */
static const ck_fault_hook *hook_of(const char *name)
{
    for (int i = 0; i < NHOOKS; i++) {
        size_t n = strlen(hooks[i].name);
        if (hooks[i].prefix ? !strncmp(name, hooks[i].name, n) : !strcmp(name, hooks[i].name)) return &hooks[i];
    }
    return NULL;
}

/* The next ':'-separated field of *s into out; 0, or -1 when it is empty. */
static int field(const char **s, char *out, size_t cap)
{
    size_t n = strcspn(*s, ":");
    if (!n || n >= cap) return -1;
    memcpy(out, *s, n);
    out[n] = '\0';
    *s += n + ((*s)[n] == ':');
    return 0;
}

int ck_fault_parse(const char *spec, ck_fault_spec *out, char *err, size_t errlen)
{
    ck_sbuf e;
    ck_sbuf_init(&e, err, errlen);
    *out = (ck_fault_spec){.rank = -1, .nth = 1};
    char rank[24], sig[16], extra[24];
    const char *s = spec ? spec : "";
    if (field(&s, out->hook, sizeof out->hook) || field(&s, rank, sizeof rank) || field(&s, sig, sizeof sig)) {
        ck_sbuf_add(&e, "expected HOOK:RANK:SIG[:N][:once=FILE]");
        return -1;
    }
    if (!hook_of(out->hook)) {
        ck_sbuf_add(&e, "no hook named '%s' (the hooks: phase/PHASE, shm/1 .. shm/5, ckpt/write, ckpt/rename, "
                        "ckpt/between, ckpt/epoch)", out->hook);
        return -1;
    }
    long long v;
    if (strcmp(rank, "*") && ck_parse_int(rank, 0, INT_MAX, &v, NULL, 0)) {
        ck_sbuf_add(&e, "RANK '%s' is neither a rank nor *", rank);
        return -1;
    }
    out->rank = strcmp(rank, "*") ? (int)v : -1;
    if (strcmp(sig, "STOP") && strcmp(sig, "KILL")) {
        ck_sbuf_add(&e, "SIG '%s' is neither STOP nor KILL", sig);
        return -1;
    }
    out->sig = strcmp(sig, "KILL") ? SIGSTOP : SIGKILL;
    if (*s && strncmp(s, "once=", 5)) {
        if (field(&s, extra, sizeof extra) || ck_parse_int(extra, 1, LONG_MAX, &v, NULL, 0)) {
            ck_sbuf_add(&e, "N must be a count of at least 1");
            return -1;
        }
        out->nth = (long)v;
    }
    if (!*s) return 0;
    /* once=FILE takes the rest: a path may hold a ':' */
    if (strncmp(s, "once=", 5) || !s[5] || strlen(s + 5) >= sizeof out->once) {
        ck_sbuf_add(&e, "expected once=FILE after SIG (and N), not '%s'", s);
        return -1;
    }
    snprintf(out->once, sizeof out->once, "%s", s + 5);
    return 0;
}

int ck_fault_matches(const ck_fault_spec *f, const char *point, int rank)
{
    if (f->rank >= 0 && f->rank != rank) return 0;
    const ck_fault_hook *h = hook_of(f->hook);
    return h && (h->prefix ? !strncmp(point, f->hook, strlen(f->hook)) : !strcmp(point, f->hook));
}

void ck_fault_point(const char *point, int rank)
{
    if (!hook_of(point)) {   /* a point missing from the table: a test could not name it */
        fprintf(stderr, "collkit: fault point '%s' is not in the table of hooks (collectives/src/fault.c)\n", point);
        abort();
    }
    const char *spec = getenv("COLLKIT_FAULT");
    if (!spec || !*spec) return;
    ck_fault_spec f;
    char err[256];
    if (ck_fault_parse(spec, &f, err, sizeof err)) {
        fprintf(stderr, "COLLKIT_FAULT=%s: %s\n", spec, err);
        exit(2);
    }
    static long hits;   /* of the hook named, in this process: one variable names one */
    if (!ck_fault_matches(&f, point, rank) || ++hits != f.nth) return;
    if (f.once[0]) {   /* armed only in the run that creates the file */
        int fd = open(f.once, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) return;
        close(fd);
    }
    fflush(stdout);
    fflush(stderr);
    raise(f.sig);
}
