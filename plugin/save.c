/*
 * save.c — the crash harness of lab 06: `PROG save --dir DIR ...` runs the
 * saver a file registered (CK_REGISTER_SAVER, collkit_save.h) and stops it,
 * deterministically, at any one of its file-system calls.
 *
 * The program is linked with -Wl,--wrap=SYM for every call that makes or
 * breaks a save (cmake/CollkitPlugin.cmake): the saver's `write` is
 * __wrap_write below. Outside the saver (the harness's own I/O, the library,
 * MPI) a wrapper only calls the real function. While the saver runs (armed),
 * each call is numbered, and at call K the harness
 *   - kills the process before the call is made (--crash-at K: the machine
 *     stopped there; what is on disk is what the calls before made), or
 *   - fails it without making it (--fail-at K: -1 with errno ENOSPC or EIO;
 *     close is the exception: Linux releases the descriptor even when close
 *     reports an error, so the harness does too);
 * and it records what durability needs: per file (by inode: a rename moves
 * the name, not the data) the last write and the last fsync after it, every
 * rename onto PATH, every fsync of PATH's directory.
 *
 * The first write to each open file is made short (half the bytes), as a
 * signal or a nearly full disk can make it: a save that does not continue a
 * short write leaves a truncated file.
 *
 * Each run prints one verdict as its last line: "save: PASS ...",
 * "save: FAIL ..." (the contents, the return value or the directory are
 * wrong) or "save: RULES ..." (all of that is right, but a durability rule
 * is broken: what a power loss, not a killed process, would expose).
 * labs/collgrade reads them; people read --trace.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include "collkit_save.h"

int save_main(int argc, char **argv);

/* ------------------------------------------------------------ registration */

static ck_save_fn saver_save;
static ck_recover_fn saver_recover;
static const char *saver_file;

void ck_register_saver_or_exit(ck_save_fn save, ck_recover_fn recover, const char *file)
{
    if (!save || !recover) {
        fprintf(stderr, "collkit: %s: CK_REGISTER_SAVER needs a save and a recover function\n", file);
        exit(2);
    }
    if (saver_save) {
        fprintf(stderr, "collkit: %s registers a saver, but %s already did: one saver per program\n", file,
                saver_file);
        exit(2);
    }
    saver_save = save;
    saver_recover = recover;
    saver_file = file;
}

/* ------------------------------------------------------------ the record */

enum { INJ_NONE, INJ_CRASH, INJ_FAIL };
enum { MAX_FD = 1024, NAME_LEN = 160, DESC_LEN = 400, MAX_INODES = 64, MAX_RENAMES = 32, MAX_DIRSYNCS = 32 };

typedef struct { dev_t dev; ino_t ino; int last_write, last_sync; } inode_rec;
typedef struct { int idx; dev_t dev; ino_t ino; char desc[DESC_LEN]; } rename_rec;

static struct {
    int armed, trace, count;          /* calls made while armed, numbered from 1 */
    int mode, at, err;                /* the injection: at call AT, crash or fail with ERR */
    int fired;                        /* the call that was failed, 0 if none */
    char fired_desc[DESC_LEN];
    const char *dir, *path;           /* DIR as given, DIR/state.bin */
    dev_t dir_dev; ino_t dir_ino;
    char fdname[MAX_FD][NAME_LEN];    /* what each descriptor opened, as shown */
    unsigned char written[MAX_FD];    /* the descriptor was written since it was opened */
    inode_rec inodes[MAX_INODES]; int ninodes;
    rename_rec renames[MAX_RENAMES]; int nrenames;   /* successful renames onto PATH */
    int dirsyncs[MAX_DIRSYNCS]; int ndirsyncs;       /* successful fsyncs of PATH's directory */
} H;

static const char *errname(int e)
{
    switch (e) {
    case ENOSPC: return "ENOSPC"; case EIO: return "EIO"; case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST"; case EACCES: return "EACCES"; case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR"; case EBADF: return "EBADF"; case EINVAL: return "EINVAL";
    case EINTR: return "EINTR"; case EXDEV: return "EXDEV"; case ENOTEMPTY: return "ENOTEMPTY";
    case EROFS: return "EROFS"; case EPERM: return "EPERM"; case EMFILE: return "EMFILE";
    default: { static char b[32]; snprintf(b, sizeof b, "errno %d", e); return b; }
    }
}

/* A path as the trace shows it: relative to DIR when inside it. */
static const char *shown(const char *p)
{
    if (!p) return "(null)";
    size_t n = strlen(H.dir);
    if (!strncmp(p, H.dir, n) && p[n] == '/' && p[n + 1]) return p + n + 1;
    return p;
}

/* A descriptor as the trace shows it: "3 state.bin.tmp.77", or "3" when it
 * was not opened by a call the harness sees (opendir's). */
static const char *fdn(int fd)
{
    static char b[4][NAME_LEN + 16];
    static int next;
    char *o = b[next++ % 4];
    if (fd >= 0 && fd < MAX_FD && H.fdname[fd][0]) snprintf(o, NAME_LEN + 16, "%d %s", fd, H.fdname[fd]);
    else snprintf(o, NAME_LEN + 16, "%d", fd);
    return o;
}

static void flags_str(int flags, char *out, size_t len)
{
    int acc = flags & O_ACCMODE;
    snprintf(out, len, "%s%s%s%s%s%s%s%s", acc == O_WRONLY ? "O_WRONLY" : acc == O_RDWR ? "O_RDWR" : "O_RDONLY",
             flags & O_CREAT ? "|O_CREAT" : "", flags & O_EXCL ? "|O_EXCL" : "", flags & O_TRUNC ? "|O_TRUNC" : "",
             flags & O_APPEND ? "|O_APPEND" : "", flags & O_DIRECTORY ? "|O_DIRECTORY" : "",
             (flags & O_SYNC) == O_SYNC ? "|O_SYNC" : (flags & O_DSYNC) ? "|O_DSYNC" : "",
             flags & O_CLOEXEC ? "|O_CLOEXEC" : "");
}

static inode_rec *inode_of(dev_t dev, ino_t ino)
{
    for (int i = 0; i < H.ninodes; i++)
        if (H.inodes[i].dev == dev && H.inodes[i].ino == ino) return &H.inodes[i];
    if (H.ninodes == MAX_INODES) return NULL;
    inode_rec *r = &H.inodes[H.ninodes++];
    r->dev = dev; r->ino = ino; r->last_write = r->last_sync = 0;
    return r;
}

static void note_write(int fd, int k)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    inode_rec *r = inode_of(st.st_dev, st.st_ino);
    if (!r) return;
    r->last_write = k;
    int fl = fcntl(fd, F_GETFL);   /* O_SYNC / O_DSYNC: the write itself is flushed */
    if (fl != -1 && (fl & O_DSYNC)) r->last_sync = k;
}

static void note_sync(int fd, int k)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        if (st.st_dev == H.dir_dev && st.st_ino == H.dir_ino && H.ndirsyncs < MAX_DIRSYNCS) H.dirsyncs[H.ndirsyncs++] = k;
        return;
    }
    inode_rec *r = inode_of(st.st_dev, st.st_ino);
    if (r) r->last_sync = k;
}

/* After a rename that succeeded: was its target PATH? (The same inode.) */
static void note_rename(int newdirfd, const char *newpath, int k, const char *desc)
{
    struct stat a, b;
    if (fstatat(newdirfd, newpath, &a, 0) != 0 || stat(H.path, &b) != 0) return;
    if (a.st_dev != b.st_dev || a.st_ino != b.st_ino || H.nrenames == MAX_RENAMES) return;
    rename_rec *r = &H.renames[H.nrenames++];
    r->idx = k; r->dev = a.st_dev; r->ino = a.st_ino;
    snprintf(r->desc, sizeof r->desc, "%s", desc);
}

static void set_name(int fd, const char *name)
{
    if (fd < 0 || fd >= MAX_FD) return;
    snprintf(H.fdname[fd], NAME_LEN, "%s", name);
    H.written[fd] = 0;
}

/* The gate every armed call passes: its number, then a crash (never
 * returns), a failure (returns 1: the caller makes no call) or the call. */
static int gate(const char *desc, int *k)
{
    *k = ++H.count;
    if (H.mode == INJ_CRASH && *k == H.at) {
        if (H.trace) printf("  [%d] %s   <- crash: the process is killed before this call\n", *k, desc);
        printf("save: crash at call %d: %s\n", *k, desc);
        fflush(stdout);
        raise(SIGKILL);
    }
    if (H.mode == INJ_FAIL && *k == H.at) {
        H.fired = *k;
        snprintf(H.fired_desc, sizeof H.fired_desc, "%s", desc);
        return 1;
    }
    return 0;
}

static void show(int k, const char *desc, long ret, int err, int injected)
{
    if (!H.trace) return;
    if (ret < 0) printf("  [%d] %s = -1 %s%s\n", k, desc, errname(err), injected ? "   <- injected failure" : "");
    else printf("  [%d] %s = %ld\n", k, desc, ret);
    fflush(stdout);
}

static int failed(int k, const char *desc)
{
    show(k, desc, -1, H.err, 1);
    errno = H.err;
    return -1;
}

/* ------------------------------------------------------------ the wrappers */

int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
int __real_openat(int dirfd, const char *path, int flags, ...);
int __real_openat64(int dirfd, const char *path, int flags, ...);
int __real_creat(const char *path, mode_t mode);
int __real_creat64(const char *path, mode_t mode);
ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __real_pwrite64(int fd, const void *buf, size_t n, off_t off);
int __real_ftruncate(int fd, off_t len);
int __real_ftruncate64(int fd, off_t len);
int __real_fsync(int fd);
int __real_fdatasync(int fd);
int __real_rename(const char *from, const char *to);
int __real_renameat(int fromdir, const char *from, int todir, const char *to);
int __real_close(int fd);
int __real_unlink(const char *path);
int __real_unlinkat(int dirfd, const char *path, int flags);

int __wrap_open(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat64(int dirfd, const char *path, int flags, ...);
int __wrap_creat(const char *path, mode_t mode);
int __wrap_creat64(const char *path, mode_t mode);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __wrap_pwrite64(int fd, const void *buf, size_t n, off_t off);
int __wrap_ftruncate(int fd, off_t len);
int __wrap_ftruncate64(int fd, off_t len);
int __wrap_fsync(int fd);
int __wrap_fdatasync(int fd);
int __wrap_rename(const char *from, const char *to);
int __wrap_renameat(int fromdir, const char *from, int todir, const char *to);
int __wrap_close(int fd);
int __wrap_unlink(const char *path);
int __wrap_unlinkat(int dirfd, const char *path, int flags);

static int open_common(int dirfd, const char *path, int flags, mode_t mode, const char *fn)
{
    char desc[DESC_LEN], fl[128];
    flags_str(flags, fl, sizeof fl);
    if (dirfd == AT_FDCWD) snprintf(desc, sizeof desc, "%s(%s, %s)", fn, shown(path), fl);
    else snprintf(desc, sizeof desc, "%s(%s, %s, %s)", fn, fdn(dirfd), shown(path), fl);
    int k;
    if (gate(desc, &k)) return failed(k, desc);
    int fd = __real_openat(dirfd, path, flags, mode);
    int e = errno;
    if (fd >= 0) set_name(fd, shown(path));
    show(k, desc, fd, e, 0);
    errno = e;
    return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int __wrap_open(const char *path, int flags, ...)
{
    va_list ap; va_start(ap, flags); mode_t m = mode_arg(flags, ap); va_end(ap);
    return H.armed ? open_common(AT_FDCWD, path, flags, m, "open") : __real_open(path, flags, m);
}
int __wrap_open64(const char *path, int flags, ...)
{
    va_list ap; va_start(ap, flags); mode_t m = mode_arg(flags, ap); va_end(ap);
    return H.armed ? open_common(AT_FDCWD, path, flags, m, "open") : __real_open64(path, flags, m);
}
int __wrap_openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap; va_start(ap, flags); mode_t m = mode_arg(flags, ap); va_end(ap);
    return H.armed ? open_common(dirfd, path, flags, m, "openat") : __real_openat(dirfd, path, flags, m);
}
int __wrap_openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap; va_start(ap, flags); mode_t m = mode_arg(flags, ap); va_end(ap);
    return H.armed ? open_common(dirfd, path, flags, m, "openat") : __real_openat64(dirfd, path, flags, m);
}
int __wrap_creat(const char *path, mode_t mode)
{
    return H.armed ? open_common(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode, "creat") : __real_creat(path, mode);
}
int __wrap_creat64(const char *path, mode_t mode)
{
    return H.armed ? open_common(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode, "creat") : __real_creat64(path, mode);
}

/* The first write to each open file writes half (rounded up). */
static size_t short_len(int fd, size_t n)
{
    if (fd < 0 || fd >= MAX_FD || H.written[fd]) return n;
    H.written[fd] = 1;
    return n > 1 ? (n + 1) / 2 : n;
}

static ssize_t write_common(int fd, const void *buf, size_t n, off_t off, int positional)
{
    char desc[DESC_LEN];
    if (positional) snprintf(desc, sizeof desc, "pwrite(%s, %zu B at %lld)", fdn(fd), n, (long long)off);
    else snprintf(desc, sizeof desc, "write(%s, %zu B)", fdn(fd), n);
    int k;
    if (gate(desc, &k)) return failed(k, desc);
    size_t m = short_len(fd, n);
    ssize_t r = positional ? __real_pwrite(fd, buf, m, off) : __real_write(fd, buf, m);
    int e = errno;
    if (r > 0) note_write(fd, k);
    show(k, desc, (long)r, e, 0);
    errno = e;
    return r;
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
    return H.armed ? write_common(fd, buf, n, 0, 0) : __real_write(fd, buf, n);
}
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return H.armed ? write_common(fd, buf, n, off, 1) : __real_pwrite(fd, buf, n, off);
}
ssize_t __wrap_pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return H.armed ? write_common(fd, buf, n, off, 1) : __real_pwrite64(fd, buf, n, off);
}

static int truncate_common(int fd, off_t len)
{
    char desc[DESC_LEN];
    snprintf(desc, sizeof desc, "ftruncate(%s, %lld)", fdn(fd), (long long)len);
    int k;
    if (gate(desc, &k)) return failed(k, desc);
    int r = __real_ftruncate(fd, len), e = errno;
    if (r == 0) note_write(fd, k);
    show(k, desc, r, e, 0);
    errno = e;
    return r;
}
int __wrap_ftruncate(int fd, off_t len) { return H.armed ? truncate_common(fd, len) : __real_ftruncate(fd, len); }
int __wrap_ftruncate64(int fd, off_t len) { return H.armed ? truncate_common(fd, len) : __real_ftruncate64(fd, len); }

static int sync_common(int fd, int data_only)
{
    char desc[DESC_LEN];
    snprintf(desc, sizeof desc, "%s(%s)", data_only ? "fdatasync" : "fsync", fdn(fd));
    int k;
    if (gate(desc, &k)) return failed(k, desc);
    int r = data_only ? __real_fdatasync(fd) : __real_fsync(fd), e = errno;
    if (r == 0) note_sync(fd, k);
    show(k, desc, r, e, 0);
    errno = e;
    return r;
}
int __wrap_fsync(int fd) { return H.armed ? sync_common(fd, 0) : __real_fsync(fd); }
int __wrap_fdatasync(int fd) { return H.armed ? sync_common(fd, 1) : __real_fdatasync(fd); }

static int rename_common(int fromdir, const char *from, int todir, const char *to)
{
    char desc[DESC_LEN], a[NAME_LEN + 16], b[NAME_LEN + 16];
    if (fromdir == AT_FDCWD) snprintf(a, sizeof a, "%s", shown(from)); else snprintf(a, sizeof a, "%d/%s", fromdir, from);
    if (todir == AT_FDCWD) snprintf(b, sizeof b, "%s", shown(to)); else snprintf(b, sizeof b, "%d/%s", todir, to);
    snprintf(desc, sizeof desc, "%s(%s -> %s)", fromdir == AT_FDCWD && todir == AT_FDCWD ? "rename" : "renameat", a, b);
    int k;
    if (gate(desc, &k)) return failed(k, desc);
    int r = __real_renameat(fromdir, from, todir, to), e = errno;
    if (r == 0) note_rename(todir, to, k, desc);
    show(k, desc, r, e, 0);
    errno = e;
    return r;
}
int __wrap_rename(const char *from, const char *to)
{
    return H.armed ? rename_common(AT_FDCWD, from, AT_FDCWD, to) : __real_rename(from, to);
}
int __wrap_renameat(int fromdir, const char *from, int todir, const char *to)
{
    return H.armed ? rename_common(fromdir, from, todir, to) : __real_renameat(fromdir, from, todir, to);
}

int __wrap_close(int fd)
{
    if (!H.armed) return __real_close(fd);
    char desc[DESC_LEN];
    snprintf(desc, sizeof desc, "close(%s)", fdn(fd));
    int k, fail = gate(desc, &k);
    int r = __real_close(fd), e = errno;   /* made even when failed: Linux frees the descriptor */
    set_name(fd, "");
    if (fail) return failed(k, desc);
    show(k, desc, r, e, 0);
    errno = e;
    return r;
}

static int unlink_common(int dirfd, const char *path, int flags)
{
    char desc[DESC_LEN];
    if (dirfd == AT_FDCWD && !flags) snprintf(desc, sizeof desc, "unlink(%s)", shown(path));
    else snprintf(desc, sizeof desc, "unlinkat(%s, %s%s)", fdn(dirfd), shown(path),
                  flags & AT_REMOVEDIR ? ", AT_REMOVEDIR" : "");
    int k;
    if (gate(desc, &k)) return failed(k, desc);
    int r = __real_unlinkat(dirfd, path, flags), e = errno;
    show(k, desc, r, e, 0);
    errno = e;
    return r;
}
int __wrap_unlink(const char *path) { return H.armed ? unlink_common(AT_FDCWD, path, 0) : __real_unlink(path); }
int __wrap_unlinkat(int dirfd, const char *path, int flags)
{
    return H.armed ? unlink_common(dirfd, path, flags) : __real_unlinkat(dirfd, path, flags);
}

/* ------------------------------------------------------------ running the saver */

static void arm(int mode, int at, int err, int trace)
{
    H.count = 0; H.fired = 0; H.fired_desc[0] = 0;
    H.mode = mode; H.at = at; H.err = err; H.trace = trace;
    H.ninodes = H.nrenames = H.ndirsyncs = 0;
    memset(H.written, 0, sizeof H.written);
    for (int i = 0; i < MAX_FD; i++) H.fdname[i][0] = 0;
    H.armed = 1;
}
static void disarm(void) { H.armed = 0; H.mode = INJ_NONE; }

static int run_save(const char *path, const void *data, size_t n, int *err, int mode, int at, int e, int trace,
                    const char *what)
{
    if (trace) { printf("my_save(%s, %s, %zu B):\n", shown(path), what, n); fflush(stdout); }
    arm(mode, at, e, trace);
    errno = 0;
    int rc = saver_save(path, data, n);
    *err = errno;
    disarm();
    if (trace) { printf("  returned %d%s%s\n", rc, rc ? ", errno " : "", rc ? errname(*err) : ""); fflush(stdout); }
    return rc;
}

static void run_recover(int trace)
{
    if (trace) { printf("my_recover(%s):\n", shown(H.path)); fflush(stdout); }
    arm(INJ_NONE, 0, 0, trace);
    saver_recover(H.path);
    disarm();
}

/* ------------------------------------------------------------ versions and verdicts */

enum { HEADER = 24, OLD_BODY = 1000 };

/* Version V: "CKSAVE01", u32 version, u32 FNV-1a of the body, u64 body
 * length, then BODY pseudo-random bytes that depend on V. */
static unsigned char *make_version(uint32_t v, size_t body, size_t *len)
{
    unsigned char *b = malloc(HEADER + body);
    if (!b) { fprintf(stderr, "save: out of memory\n"); exit(2); }
    uint32_t x = 2654435761u * v + 12345u, h = 2166136261u;
    for (size_t i = 0; i < body; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        b[HEADER + i] = (unsigned char)x;
        h = (h ^ b[HEADER + i]) * 16777619u;
    }
    uint64_t n64 = body;
    memcpy(b, "CKSAVE01", 8); memcpy(b + 8, &v, 4); memcpy(b + 12, &h, 4); memcpy(b + 16, &n64, 8);
    *len = HEADER + body;
    return b;
}

static unsigned char *v1, *v2;
static size_t v1len, v2len;

/* What PATH holds: 1 or 2 (that version, byte for byte), 0 (an empty file
 * where EMPTY_OK), or -1 with a phrase saying what it is instead. */
static int contents(char *why, size_t len, int empty_ok)
{
    int fd = open(H.path, O_RDONLY);
    if (fd < 0) { snprintf(why, len, "state.bin does not exist (%s)", errname(errno)); return -1; }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { close(fd); snprintf(why, len, "state.bin is not a regular file"); return -1; }
    size_t n = (size_t)st.st_size, got = 0;
    unsigned char *b = malloc(n ? n : 1);
    if (!b) { close(fd); snprintf(why, len, "state.bin cannot be read: out of memory"); return -1; }
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    int res = -1;
    if (n == 0) { res = empty_ok ? 0 : -1; snprintf(why, len, "state.bin is empty (0 bytes)"); }
    else if (n == v1len && !memcmp(b, v1, n)) res = 1;
    else if (n == v2len && !memcmp(b, v2, n)) res = 2;
    else if (n < v2len && !memcmp(b, v2, n))
        snprintf(why, len, "state.bin holds only the first %zu of version 2's %zu bytes (a torn write)", n, v2len);
    else if (n < v1len && !memcmp(b, v1, n))
        snprintf(why, len, "state.bin holds only the first %zu of version 1's %zu bytes", n, v1len);
    else if (n > v2len && !memcmp(b, v2, v2len))
        snprintf(why, len, "state.bin holds version 2 followed by %zu more bytes (a mix: written in place "
                 "over version 1 without truncating)", n - v2len);
    else {
        size_t same = 0;
        while (same < n && same < v2len && b[same] == v2[same]) same++;
        if (same > 0)
            snprintf(why, len, "state.bin holds %zu bytes: the first %zu of version 2, then bytes of neither "
                     "version (a mix)", n, same);
        else
            snprintf(why, len, "state.bin holds %zu bytes that are neither version 1 (%zu B) nor version 2 (%zu B)",
                     n, v1len, v2len);
    }
    free(b);
    return res;
}

/* Files in DIR other than state.bin, as a phrase; 0 when there are none. */
static int litter(char *out, size_t len)
{
    DIR *d = opendir(H.dir);
    int n = 0;
    out[0] = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "state.bin")) continue;
        if (n < 3) {
            size_t l = strlen(out);
            snprintf(out + l, len - l, "%s%s", n ? ", " : "", e->d_name);
        }
        n++;
    }
    closedir(d);
    if (n > 3) { size_t l = strlen(out); snprintf(out + l, len - l, " and %d more", n - 3); }
    return n;
}

/* The durability rules over the calls that succeeded; NULL when they hold.
 * (1) every file renamed onto PATH, and the file PATH names at the end, was
 * flushed after its last write (before the rename); (2) PATH's directory was
 * flushed after the last rename onto PATH. DIR_ONLY: rule (2) alone (after an
 * injected failure, what a return of 0 claims beyond the fault parts' own
 * checks is that the rename is durable). */
static const char *rules(int dir_only)
{
    static char why[1200];
    int last_rename = 0;
    const char *last_desc = "";
    for (int i = 0; i < H.nrenames; i++) {
        const rename_rec *r = &H.renames[i];
        inode_rec *f = inode_of(r->dev, r->ino);
        if (!dir_only && f && f->last_write && f->last_write < r->idx && !(f->last_sync > f->last_write && f->last_sync < r->idx)) {
            snprintf(why, sizeof why, "%s at call %d before the data written at call %d was flushed (fsync): after a "
                     "power loss state.bin could name an empty or partial file", r->desc, r->idx, f->last_write);
            return why;
        }
        last_rename = r->idx; last_desc = r->desc;
    }
    struct stat st;
    if (!dir_only && stat(H.path, &st) == 0) {
        inode_rec *f = inode_of(st.st_dev, st.st_ino);
        if (f && f->last_write > f->last_sync) {
            snprintf(why, sizeof why, "the data written to state.bin at call %d was never flushed (fsync) before "
                     "my_save returned 0", f->last_write);
            return why;
        }
    }
    if (last_rename) {
        int before = 0;
        for (int i = 0; i < H.ndirsyncs; i++) {
            if (H.dirsyncs[i] > last_rename) return NULL;
            before = H.dirsyncs[i];
        }
        if (before)
            snprintf(why, sizeof why, "the directory was flushed (fsync at call %d) before %s at call %d, not after: "
                     "the rename itself may not survive a power loss", before, last_desc, last_rename);
        else
            snprintf(why, sizeof why, "no fsync of the directory after %s at call %d: the rename itself may not "
                     "survive a power loss (open the directory, fsync it, close it)", last_desc, last_rename);
        return why;
    }
    return NULL;
}

static int verdict(const char *kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("save: %s ", kind);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    return strcmp(kind, "PASS") == 0 ? 0 : 1;
}

/* Before any injection: my_recover, then version 1 saved and checked. */
static int prepare(int trace)
{
    char why[600], left[600];
    run_recover(trace);
    int e, rc = run_save(H.path, v1, v1len, &e, INJ_NONE, 0, 0, 0, "version 1");
    if (rc != 0) return verdict("FAIL", "saving version 1 (no fault injected): my_save returned %d (%s)", rc, errname(e));
    if (contents(why, sizeof why, 0) != 1) return verdict("FAIL", "after saving version 1 (no fault injected), %s", why);
    if (litter(left, sizeof left))
        return verdict("FAIL", "after saving version 1 (no fault injected), the directory holds %s beside state.bin", left);
    return -1;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: PROG save --dir DIR [--size BYTES] [--crash-at K | --fail-at K [--errno ENOSPC|EIO]]\n"
            "                 [--count] [--verify] [--edge] [--trace]\n"
            "  Runs the registered saver (CK_REGISTER_SAVER) on DIR/state.bin, DIR an empty directory:\n"
            "  my_recover, version 1 saved, then version 2 saved under the harness (body BYTES, default 4099).\n"
            "  --crash-at K    kill the process before the saver's K-th file-system call\n"
            "  --fail-at K     make that call fail instead (errno ENOSPC, or --errno EIO)\n"
            "  --count         print how many calls one save of version 2 makes (K goes 1..that)\n"
            "  --verify        after a crash: state.bin must be version 1 or 2; then my_recover must\n"
            "                  leave state.bin alone in DIR\n"
            "  --edge          an empty save (0 bytes) and a save into a directory that does not exist\n"
            "  --trace         print every call the saver makes, numbered\n");
    return 2;
}

static int number(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "save: %s '%s': expected a whole number from %ld to %ld\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int save_main(int argc, char **argv)
{
    const char *dir = NULL;
    long size = 4099, at = 0;
    int mode = INJ_NONE, err = ENOSPC, count = 0, verify = 0, edge = 0, trace = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--dir") && has) dir = argv[++i];
        else if (!strcmp(a, "--size") && has) { if (number(a, argv[++i], 0, 64L << 20, &size)) return 2; }
        else if ((!strcmp(a, "--crash-at") || !strcmp(a, "--fail-at")) && has) {
            if (mode != INJ_NONE) { fprintf(stderr, "save: --crash-at and --fail-at: one injection per run\n"); return 2; }
            mode = a[2] == 'c' ? INJ_CRASH : INJ_FAIL;
            if (number(a, argv[++i], 1, 1000000, &at)) return 2;
        } else if (!strcmp(a, "--errno") && has) {
            const char *e = argv[++i];
            if (!strcmp(e, "ENOSPC")) err = ENOSPC;
            else if (!strcmp(e, "EIO")) err = EIO;
            else { fprintf(stderr, "save: --errno '%s': expected ENOSPC or EIO\n", e); return 2; }
        } else if (!strcmp(a, "--count")) count = 1;
        else if (!strcmp(a, "--verify")) verify = 1;
        else if (!strcmp(a, "--edge")) edge = 1;
        else if (!strcmp(a, "--trace")) trace = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage();
        else { fprintf(stderr, "save: unknown or incomplete option '%s'\n", a); return usage(); }
    }
    if (!dir || !*dir) { fprintf(stderr, "save: --dir DIR is required\n"); return usage(); }
    if (count + verify + edge + (mode != INJ_NONE) > 1) {
        fprintf(stderr, "save: --count, --verify, --edge and an injection (--crash-at, --fail-at) are separate runs\n");
        return 2;
    }
    if (!saver_save) {
        fprintf(stderr, "save: no saver in this program: its file needs a CK_REGISTER_SAVER(save, recover) line "
                        "(collkit_save.h)\n");
        return 2;
    }
    struct stat st;
    if (stat(dir, &st) != 0) { fprintf(stderr, "save: --dir %s: %s\n", dir, strerror(errno)); return 2; }
    if (!S_ISDIR(st.st_mode)) { fprintf(stderr, "save: --dir %s: not a directory\n", dir); return 2; }
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    if (dl > PATH_MAX - 64) { fprintf(stderr, "save: --dir: path too long\n"); return 2; }
    static char dirbuf[PATH_MAX], pathbuf[PATH_MAX + 16];
    memcpy(dirbuf, dir, dl); dirbuf[dl] = 0;
    snprintf(pathbuf, sizeof pathbuf, "%s/state.bin", dirbuf);
    H.dir = dirbuf; H.path = pathbuf; H.dir_dev = st.st_dev; H.dir_ino = st.st_ino;
    setvbuf(stdout, NULL, _IOLBF, 0);

    v1 = make_version(1, OLD_BODY, &v1len);
    v2 = make_version(2, (size_t)size, &v2len);
    char why[600], left[600];

    if (verify) {
        int was = contents(why, sizeof why, 0);
        if (was < 0) return verdict("FAIL", "%s: it must hold version 1 or version 2, whole", why);
        run_recover(trace);
        int now = contents(why, sizeof why, 0);
        if (now != was) return verdict("FAIL", "my_recover changed state.bin: %s", now < 0 ? why : "it holds the other version now");
        if (litter(left, sizeof left))
            return verdict("FAIL", "state.bin holds version %d, but after my_recover the directory still holds %s: "
                           "my_recover must remove the temporary files a killed save left", was, left);
        return verdict("PASS", "state.bin holds version %d, whole; my_recover left only state.bin", was);
    }

    int rc = prepare(trace && !edge);
    if (rc >= 0) return rc;

    if (edge) {
        static const char missing_name[] = "no-such-dir";
        char missing[PATH_MAX + 32];
        snprintf(missing, sizeof missing, "%s/%s/state.bin", H.dir, missing_name);
        int e;
        int mrc = run_save(missing, v2, v2len, &e, INJ_NONE, 0, 0, trace, "version 2"), me = e;
        struct stat ms;
        char where[PATH_MAX + 16];
        snprintf(where, sizeof where, "%s/%s", H.dir, missing_name);
        if (mrc == 0) return verdict("FAIL", "a save into a directory that does not exist (%s/state.bin) returned 0", missing_name);
        if (me == 0) return verdict("FAIL", "a save into a directory that does not exist returned %d without setting errno", mrc);
        if (stat(where, &ms) == 0) return verdict("FAIL", "a save into a directory that does not exist created %s", missing_name);
        rc = run_save(H.path, "", 0, &e, INJ_NONE, 0, 0, trace, "0 bytes");
        if (rc != 0) return verdict("FAIL", "saving 0 bytes returned %d (%s): an empty file is a valid save", rc, errname(e));
        int c = contents(why, sizeof why, 1);
        if (c != 0) return verdict("FAIL", "after saving 0 bytes, %s; expected an empty file",
                                   c < 0 ? why : c == 1 ? "state.bin still holds version 1" : "state.bin holds version 2");
        if (litter(left, sizeof left)) return verdict("FAIL", "after saving 0 bytes, the directory holds %s beside state.bin", left);
        return verdict("PASS", "a save into a missing directory returned %d (%s); saving 0 bytes left an empty state.bin",
                       mrc, errname(me));
    }

    int e;
    rc = run_save(H.path, v2, v2len, &e, mode, (int)at, err, trace, "version 2");
    int calls = H.count, c = contents(why, sizeof why, 0), n_left = litter(left, sizeof left);
    const char *broken = rules(H.fired != 0);

    if (count) {
        if (rc != 0) return verdict("FAIL", "saving version 2 (no fault injected) returned %d (%s)", rc, errname(e));
        printf("save: COUNT %d (one save of version 2 makes %d file-system calls: --crash-at and --fail-at "
               "take 1..%d)\n", calls, calls, calls);
        return 0;
    }

    if (H.fired) {
        int k = H.fired, after_rename = 0;
        for (int i = 0; i < H.nrenames; i++) if (H.renames[i].idx < k) after_rename = 1;
        const char *d = H.fired_desc, *en = errname(err);
        if (rc == 0) {
            /* 0 after a failure is right only if the save still happened, whole and durable. */
            if (c != 2) return verdict("FAIL", "my_save returned 0 although %s at call %d failed (%s): %s", d, k, en, why);
            if (n_left) return verdict("FAIL", "my_save returned 0 although %s at call %d failed (%s), and left %s", d, k, en, left);
            if (broken) return verdict("FAIL", "my_save returned 0 although %s at call %d failed (%s): %s", d, k, en, broken);
            return verdict("PASS", "%s at call %d failed (%s); my_save made the save anyway, whole and durable", d, k, en);
        }
        if (e == 0) return verdict("FAIL", "my_save returned %d without setting errno after %s at call %d failed (%s)", rc, d, k, en);
        int want = after_rename ? 2 : 1;
        if (c != want) {
            const char *was = c == 1 ? "state.bin holds version 1" : c == 2 ? "state.bin holds version 2" : why;
            return verdict("FAIL", "after %s at call %d failed (%s), my_save returned %d but %s (it must be %s)", d, k, en,
                           rc, was, want == 1 ? "as it was: version 1" : "version 2: the rename was made");
        }
        if (n_left)
            return verdict("FAIL", "after %s at call %d failed (%s), my_save returned %d but left %s in the directory "
                           "(a failed save removes its temporary file)", d, k, en, rc, left);
        return verdict("PASS", "%s at call %d failed (%s): my_save returned %d, state.bin is version %d, nothing left",
                       d, k, en, rc, want);
    }

    const char *how = mode == INJ_CRASH ? "with no crash (the save makes fewer calls)" : "with no fault injected";
    if (rc != 0) return verdict("FAIL", "saving version 2 %s: my_save returned %d (%s)", how, rc, errname(e));
    if (c != 2)
        return verdict("FAIL", "after saving version 2 %s, %s", how, c == 1 ? "state.bin still holds version 1" : why);
    if (n_left) return verdict("FAIL", "after saving version 2 %s, the directory holds %s beside state.bin", how, left);
    if (broken) return verdict("RULES", "%s", broken);
    return verdict("PASS", "version 2 saved in %d calls: fsync before the rename, the directory's fsync after", calls);
}
