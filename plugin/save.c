/*
 * save.c — the crash harness of lab 06: `PROG save --dir DIR ...` runs the
 * saver a file registered (CK_REGISTER_SAVER, collkit_save.h) and stops it,
 * deterministically, at any one of its file-system calls.
 *
 * Every call of the saver (and of my_recover) runs in a fresh process: this
 * program started again (exec), told only which call to make, on which path,
 * with which version (`PROG save --as-saver ...`), with the environment
 * filtered and no capabilities. Nothing of the harness is in it: not its
 * command line (which names the crash or failure point, and which the
 * harness wipes from its own memory once read), not its memory (the harness
 * is not dumpable), not its record of the calls. The harness decides the
 * injection and makes it from outside, tracing the process at the
 * system-call level (ptrace); a traced saver's open of another process's
 * /proc entries, and any open of /proc during the call, is undone and
 * refused, and so are the calls that reach another process (ptrace,
 * process_vm_readv, pidfd_getfd ...). Whatever C library
 * function the save goes through — open, the fortified __open_2, fopen,
 * dprintf, mknod, close_range, a raw syscall() — the kernel sees a system
 * call, and so does the harness. Each file-system system call (one that
 * opens, writes, truncates, flushes, names or closes a file: `fs_calls`
 * below) is numbered, and at call K the harness
 *   - kills the child (SIGKILL) at the call's entry, before the kernel makes
 *     it (--crash-at K: the machine stopped there; what is on disk is what
 *     the calls before made), or
 *   - fails it without making it (--fail-at K: -1 with errno ENOSPC or EIO;
 *     close is the exception: Linux releases the descriptor even when close
 *     reports an error, so the harness makes the call and then fails it);
 * and it records what durability needs: per file (by inode: a rename moves
 * the name, not the data) the last write and the last flush after it, every
 * rename or link onto PATH, every flush of PATH's directory.
 *
 * The first write to each open regular file is made short (half the bytes),
 * as a signal or a nearly full disk can make it: a save that does not
 * continue a short write leaves a truncated file.
 *
 * Calls whose effect on files the harness cannot follow — io_uring, POSIX
 * AIO, a shared mapping of a file, ioctl on a file, another process or
 * thread, an open of /proc, a 32-bit system call — are refused (ENOSYS): the kernel never
 * makes them, the save goes on without them (or fails), and a line before
 * the verdict names them ("save: REFUSED ..."; the integrity part fails).
 *
 * --kill-random N is independent of the counting: the save of version 2 runs
 * untraced and is killed (SIGKILL) at N random moments spread over its own
 * measured duration; each time the file must be one version, whole.
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
#include <linux/audit.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "collkit_util.h"   /* ck_opt, ck_parse_int */
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
enum { HEADER = 24, OLD_BODY = 1000 };   /* a version's header; version 1's body */
enum { MAX_FD = 1024, NAME_LEN = 160, DESC_LEN = 512, MAX_INODES = 64, MAX_RENAMES = 32, MAX_DIRSYNCS = 32,
       MAX_DENIED = 4 };

typedef struct { dev_t dev; ino_t ino; int last_write, last_sync; } inode_rec;
typedef struct { int idx; dev_t dev; ino_t ino; char desc[DESC_LEN]; } rename_rec;

static struct {
    int trace, count;                 /* calls made while armed, numbered from 1 */
    int mode, at, err;                /* the injection: at call AT, crash or fail with ERR */
    int fired;                        /* the call that was failed, 0 if none */
    char fired_desc[DESC_LEN];
    const char *dir, *path;           /* DIR as given, DIR/state.bin */
    char realdir[PATH_MAX];           /* DIR resolved: descriptors are shown relative to it */
    dev_t dir_dev; ino_t dir_ino;
    unsigned char written[MAX_FD];    /* the descriptor was written since it was opened */
    inode_rec inodes[MAX_INODES]; int ninodes;
    rename_rec renames[MAX_RENAMES]; int nrenames;   /* successful renames onto PATH */
    int dirsyncs[MAX_DIRSYNCS]; int ndirsyncs;       /* successful flushes of PATH's directory */
    char denied[MAX_DENIED][48]; int ndenied;        /* calls refused: the harness cannot follow them */
} H;

static const char *errname(int e)
{
    switch (e) {
    case ENOSPC: return "ENOSPC"; case EIO: return "EIO"; case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST"; case EACCES: return "EACCES"; case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR"; case EBADF: return "EBADF"; case EINVAL: return "EINVAL";
    case EINTR: return "EINTR"; case EXDEV: return "EXDEV"; case ENOTEMPTY: return "ENOTEMPTY";
    case EROFS: return "EROFS"; case EPERM: return "EPERM"; case EMFILE: return "EMFILE";
    case ENOSYS: return "ENOSYS"; case ENOTTY: return "ENOTTY"; case ESPIPE: return "ESPIPE";
    default: { static char b[32]; snprintf(b, sizeof b, "errno %d", e); return b; }
    }
}

/* A path as the trace shows it: relative to DIR when inside it. */
static const char *shown(const char *p)
{
    if (!p) return "(null)";
    const char *roots[2] = { H.dir, H.realdir };
    for (int i = 0; i < 2; i++) {
        size_t n = roots[i] ? strlen(roots[i]) : 0;
        if (n && !strncmp(p, roots[i], n) && p[n] == '/' && p[n + 1]) return p + n + 1;
    }
    return p;
}

static void flags_str(int flags, char *out, size_t len)
{
    int acc = flags & O_ACCMODE;
    snprintf(out, len, "%s%s%s%s%s%s%s%s%s", acc == O_WRONLY ? "O_WRONLY" : acc == O_RDWR ? "O_RDWR" : "O_RDONLY",
             flags & O_CREAT ? "|O_CREAT" : "", flags & O_EXCL ? "|O_EXCL" : "", flags & O_TRUNC ? "|O_TRUNC" : "",
             flags & O_APPEND ? "|O_APPEND" : "", flags & O_DIRECTORY ? "|O_DIRECTORY" : "",
             (flags & O_TMPFILE) == O_TMPFILE ? "|O_TMPFILE" : "",
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

/* ------------------------------------------------------------ the traced child, seen from outside */

/* What the child's descriptor FD is: through /proc, which shows the
 * tracee's descriptor table to its tracer. */
static int fd_stat(pid_t pid, long fd, struct stat *st)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/fd/%ld", (int)pid, fd);
    return stat(p, st);
}

/* The open flags of the child's FD (its fdinfo), -1 if unknown. */
static int fd_flags(pid_t pid, long fd)
{
    char p[64], line[128];
    snprintf(p, sizeof p, "/proc/%d/fdinfo/%ld", (int)pid, fd);
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    int fl = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "flags:", 6)) { fl = (int)strtol(line + 6, NULL, 8); break; }
    fclose(f);
    return fl;
}

/* A descriptor as the trace shows it: "3 state.bin.tmp.77". */
static const char *fdn(pid_t pid, long fd)
{
    static char b[4][NAME_LEN + 24];
    static int next;
    char *o = b[next++ % 4], p[64], target[PATH_MAX];
    snprintf(p, sizeof p, "/proc/%d/fd/%ld", (int)pid, fd);
    ssize_t n = fd >= 0 ? readlink(p, target, sizeof target - 1) : -1;
    if (n > 0) {
        target[n] = 0;
        snprintf(o, NAME_LEN + 24, "%ld %.*s", fd, NAME_LEN, shown(target));
    } else if (fd == AT_FDCWD) snprintf(o, NAME_LEN + 24, "AT_FDCWD");
    else snprintf(o, NAME_LEN + 24, "%ld", fd);
    return o;
}

/* A string argument: read from the child's memory (/proc/PID/mem). */
static const char *child_str(int mem, unsigned long addr, char *out, size_t len)
{
    size_t got = 0;
    out[0] = 0;
    if (!addr) return "(null)";
    while (got + 1 < len) {
        size_t want = 64 - ((addr + got) & 63);   /* never across a page the string does not reach */
        if (want > len - 1 - got) want = len - 1 - got;
        ssize_t r = pread(mem, out + got, want, (off_t)(addr + got));
        if (r <= 0) break;
        void *z = memchr(out + got, 0, (size_t)r);
        got += (size_t)r;
        if (z) return out;
    }
    out[got] = 0;
    return out;
}

/* A path argument with its directory descriptor, as the trace shows it. */
static const char *at_path(pid_t pid, int mem, long dirfd, unsigned long addr, char *out, size_t len)
{
    char s[PATH_MAX];
    child_str(mem, addr, s, sizeof s);
    if ((int)dirfd == AT_FDCWD || s[0] == '/') snprintf(out, len, "%.*s", NAME_LEN, shown(s));
    else snprintf(out, len, "%s/%.*s", fdn(pid, dirfd), NAME_LEN, s);
    return out;
}

/* ------------------------------------------------------------ the file-system calls */

/* What a call does to files, for the record. */
enum {
    K_OPEN,     /* opens (may create, truncate): ARG_PATH, flags at ARG_N */
    K_WRITE,    /* writes to the descriptor at ARG_FD, ARG_N bytes (or iovecs): the first made short */
    K_TRUNC,    /* changes a file's length through ARG_FD (ftruncate, fallocate) */
    K_TRUNCP,   /* changes the length of the file at ARG_PATH (truncate) */
    K_SYNC,     /* flushes the file or directory at ARG_FD */
    K_NAME,     /* changes names in a directory: a rename or link may put a file at PATH */
    K_CLOSE,    /* releases descriptors (close, close_range) */
    K_META,     /* changes a file's attributes */
    K_DENY      /* cannot be followed: refused with ENOSYS and named */
};

typedef struct {
    long nr;
    const char *name;
    int kind;
    signed char fd, path, n;   /* argument positions (-1: none): descriptor, path, size or flags */
    signed char dirfd;         /* the directory descriptor of PATH (-1: AT_FDCWD) */
} fs_call;

#define C(sys, k, fd, path, n, dirfd) { SYS_##sys, #sys, k, fd, path, n, dirfd }
static const fs_call fs_calls[] = {
#ifdef SYS_open
    C(open, K_OPEN, -1, 0, 1, -1), C(creat, K_OPEN, -1, 0, -1, -1),
    C(rename, K_NAME, -1, 1, -1, -1), C(link, K_NAME, -1, 1, -1, -1), C(symlink, K_NAME, -1, 1, -1, -1),
    C(unlink, K_NAME, -1, 0, -1, -1), C(rmdir, K_NAME, -1, 0, -1, -1), C(mkdir, K_NAME, -1, 0, -1, -1),
    C(mknod, K_NAME, -1, 0, -1, -1), C(chmod, K_META, -1, 0, -1, -1), C(chown, K_META, -1, 0, -1, -1),
#endif
    C(openat, K_OPEN, -1, 1, 2, 0), C(openat2, K_OPEN, -1, 1, -1, 0),
    C(write, K_WRITE, 0, -1, 2, -1), C(pwrite64, K_WRITE, 0, -1, 2, -1), C(writev, K_WRITE, 0, -1, 2, -1),
    C(pwritev, K_WRITE, 0, -1, 2, -1), C(pwritev2, K_WRITE, 0, -1, 2, -1),
    C(sendfile, K_WRITE, 0, -1, 3, -1), C(copy_file_range, K_WRITE, 2, -1, 4, -1), C(splice, K_WRITE, 2, -1, 4, -1),
    C(ftruncate, K_TRUNC, 0, -1, -1, -1), C(fallocate, K_TRUNC, 0, -1, -1, -1), C(truncate, K_TRUNCP, -1, 0, -1, -1),
    C(fsync, K_SYNC, 0, -1, -1, -1), C(fdatasync, K_SYNC, 0, -1, -1, -1),
    C(sync_file_range, K_META, 0, -1, -1, -1),   /* flushes data, not the metadata that finds it: no flush */
    /* sync and syncfs flush everything and say nothing about one file's
     * errors: calls, not flushes of the file. */
    C(sync, K_META, -1, -1, -1, -1), C(syncfs, K_META, 0, -1, -1, -1),
    C(renameat, K_NAME, -1, 3, -1, 2), C(renameat2, K_NAME, -1, 3, -1, 2), C(linkat, K_NAME, -1, 3, -1, 2),
    C(symlinkat, K_NAME, -1, 2, -1, 1), C(unlinkat, K_NAME, -1, 1, -1, 0), C(mkdirat, K_NAME, -1, 1, -1, 0),
    C(mknodat, K_NAME, -1, 1, -1, 0),
    C(close, K_CLOSE, 0, -1, -1, -1), C(close_range, K_CLOSE, 0, -1, -1, -1),
    C(fchmod, K_META, 0, -1, -1, -1), C(fchmodat, K_META, -1, 1, -1, 0), C(fchown, K_META, 0, -1, -1, -1),
    C(fchownat, K_META, -1, 1, -1, 0), C(utimensat, K_META, -1, 1, -1, 0),
    C(setxattr, K_META, -1, 0, -1, -1), C(lsetxattr, K_META, -1, 0, -1, -1), C(fsetxattr, K_META, 0, -1, -1, -1),
    C(io_uring_setup, K_DENY, -1, -1, -1, -1), C(io_uring_enter, K_DENY, -1, -1, -1, -1),
    C(io_uring_register, K_DENY, -1, -1, -1, -1), C(io_setup, K_DENY, -1, -1, -1, -1),
    C(io_submit, K_DENY, -1, -1, -1, -1), C(remap_file_pages, K_DENY, -1, -1, -1, -1),
    C(process_vm_writev, K_DENY, -1, -1, -1, -1), C(ptrace, K_DENY, -1, -1, -1, -1),
    C(clone, K_DENY, -1, -1, -1, -1), C(clone3, K_DENY, -1, -1, -1, -1), C(fork, K_DENY, -1, -1, -1, -1),
    C(vfork, K_DENY, -1, -1, -1, -1), C(execve, K_DENY, -1, -1, -1, -1), C(execveat, K_DENY, -1, -1, -1, -1),
    C(open_by_handle_at, K_DENY, -1, -1, -1, -1), C(name_to_handle_at, K_DENY, -1, -1, -1, -1),
    C(fanotify_init, K_DENY, -1, -1, -1, -1), C(userfaultfd, K_DENY, -1, -1, -1, -1),
    /* another process's memory, descriptors or view of the files: the harness's own */
    C(process_vm_readv, K_DENY, -1, -1, -1, -1), C(kcmp, K_DENY, -1, -1, -1, -1),
    C(pidfd_open, K_DENY, -1, -1, -1, -1), C(pidfd_getfd, K_DENY, -1, -1, -1, -1),
    C(mount, K_DENY, -1, -1, -1, -1), C(umount2, K_DENY, -1, -1, -1, -1), C(chroot, K_DENY, -1, -1, -1, -1),
    C(pivot_root, K_DENY, -1, -1, -1, -1), C(unshare, K_DENY, -1, -1, -1, -1), C(setns, K_DENY, -1, -1, -1, -1),
    C(open_tree, K_DENY, -1, -1, -1, -1), C(move_mount, K_DENY, -1, -1, -1, -1), C(fsopen, K_DENY, -1, -1, -1, -1),
    C(fsmount, K_DENY, -1, -1, -1, -1),
};
#undef C

static const fs_call *fs_call_of(long nr)
{
    for (size_t i = 0; i < sizeof fs_calls / sizeof fs_calls[0]; i++)
        if (fs_calls[i].nr == nr) return &fs_calls[i];
    return NULL;
}

static void deny(const char *what)
{
    for (int i = 0; i < H.ndenied; i++) if (!strcmp(H.denied[i], what)) return;
    if (H.ndenied < MAX_DENIED) snprintf(H.denied[H.ndenied++], sizeof H.denied[0], "%s", what);
}

/* ------------------------------------------------------------ the tracer */

#if defined(__x86_64__)
typedef struct user_regs_struct regs_t;
static int get_regs(pid_t pid, regs_t *r) { return (int)ptrace(PTRACE_GETREGS, pid, 0, r); }
static int set_regs(pid_t pid, regs_t *r) { return (int)ptrace(PTRACE_SETREGS, pid, 0, r); }
static void set_nr(regs_t *r, long nr) { r->orig_rax = (unsigned long long)nr; }
static void set_ret(regs_t *r, long v) { r->rax = (unsigned long long)v; }
static void set_arg(regs_t *r, int i, unsigned long v)
{
    switch (i) {
    case 0: r->rdi = v; break; case 1: r->rsi = v; break; case 2: r->rdx = v; break;
    case 3: r->r10 = v; break; case 4: r->r8 = v; break; default: r->r9 = v; break;
    }
}
#define HARNESS_ARCH AUDIT_ARCH_X86_64
#else
/* Other machines: the registers are not mapped yet; traced() says so. */
typedef struct { int unused; } regs_t;
static int get_regs(pid_t pid, regs_t *r) { (void)pid; (void)r; return -1; }
static int set_regs(pid_t pid, regs_t *r) { (void)pid; (void)r; return -1; }
static void set_nr(regs_t *r, long nr) { (void)r; (void)nr; }
static void set_ret(regs_t *r, long v) { (void)r; (void)v; }
static void set_arg(regs_t *r, int i, unsigned long v) { (void)r; (void)i; (void)v; }
#define HARNESS_ARCH 0u
#endif

/* The saver's process marks the start and the end of the call with this
 * call (an ioctl on no descriptor): only the calls between are the saver's.
 * Both marks are made from one place (run_call): an end mark made from
 * elsewhere (the saver's own code) is not the end. */
enum { MARK_FD = -7, MARK_START = 0x434b5301, MARK_END = 0x434b5302 };
static __attribute__((noinline)) void mark(unsigned long which) { syscall(SYS_ioctl, MARK_FD, which, 0); }

/* The call a task is in, between its entry stop and its exit stop. */
typedef struct {
    const fs_call *c;
    int k;                  /* its number; 0: not counted */
    int refused;            /* skipped at entry: errno to return at exit */
    int fail_after;         /* made, then reported failed (close) */
    int wrote_file;         /* a write to a regular file: its inode below */
    dev_t dev; ino_t ino;
    int path_had; dev_t path_dev; ino_t path_ino;   /* PATH before the call */
    unsigned long a[6];
    char desc[DESC_LEN];
} in_call;

static void describe(pid_t pid, int mem, const fs_call *c, const unsigned long *a, char *d, size_t len)
{
    char p[NAME_LEN + 40], q[NAME_LEN + 40], fl[160];
    long n = c->n >= 0 ? (long)a[(int)c->n] : 0;
    switch (c->kind) {
    case K_OPEN:
        at_path(pid, mem, c->dirfd >= 0 ? (long)(int)a[(int)c->dirfd] : AT_FDCWD, a[(int)c->path], p, sizeof p);
        if (c->nr == SYS_openat2) { snprintf(d, len, "openat2(%s)", p); break; }
        flags_str(c->n >= 0 ? (int)n : O_WRONLY | O_CREAT | O_TRUNC, fl, sizeof fl);
        snprintf(d, len, "%s(%s, %s)", c->nr == SYS_openat ? "openat" : c->name, p, fl);
        break;
    case K_WRITE:
        if (c->nr == SYS_write) snprintf(d, len, "write(%s, %ld B)", fdn(pid, (long)(int)a[0]), n);
        else if (c->nr == SYS_pwrite64) snprintf(d, len, "pwrite(%s, %ld B at %ld)", fdn(pid, (long)(int)a[0]), n, (long)a[3]);
        else if (c->fd == 0 && c->nr != SYS_sendfile) snprintf(d, len, "%s(%s, %ld iovecs)", c->name, fdn(pid, (long)(int)a[0]), n);
        else snprintf(d, len, "%s(%s -> %s, %ld B)", c->name, fdn(pid, (long)(int)a[c->fd ? 0 : 1]),
                      fdn(pid, (long)(int)a[(int)c->fd]), n);
        break;
    case K_TRUNC:
        snprintf(d, len, "%s(%s, %ld)", c->name, fdn(pid, (long)(int)a[0]), (long)a[c->nr == SYS_fallocate ? 3 : 1]);
        break;
    case K_SYNC: case K_CLOSE:
        if (c->nr == SYS_close_range) snprintf(d, len, "close_range(%ld, %ld)", (long)(unsigned)a[0], (long)(unsigned)a[1]);
        else snprintf(d, len, "%s(%s)", c->name, fdn(pid, (long)(int)a[0]));
        break;
    case K_NAME:
        at_path(pid, mem, c->dirfd >= 0 ? (long)(int)a[(int)c->dirfd] : AT_FDCWD, a[(int)c->path], p, sizeof p);
        if (c->nr == SYS_renameat || c->nr == SYS_renameat2 || c->nr == SYS_linkat) {
            at_path(pid, mem, (long)(int)a[0], a[1], q, sizeof q);
            snprintf(d, len, "%s(%s -> %s)", c->name, q, p);
        }
#ifdef SYS_rename
        else if (c->nr == SYS_rename || c->nr == SYS_link) {
            at_path(pid, mem, AT_FDCWD, a[0], q, sizeof q);
            snprintf(d, len, "%s(%s -> %s)", c->name, q, p);
        }
#endif
        else snprintf(d, len, "%s(%s)", c->name, p);
        break;
    default:
        if (c->fd >= 0) snprintf(d, len, "%s(%s)", c->name, fdn(pid, (long)(int)a[(int)c->fd]));
        else if (c->path >= 0) snprintf(d, len, "%s(%s)", c->name,
                                        at_path(pid, mem, c->dirfd >= 0 ? (long)(int)a[(int)c->dirfd] : AT_FDCWD,
                                                a[(int)c->path], p, sizeof p));
        else snprintf(d, len, "%s()", c->name);
    }
}

static void show(int k, const char *desc, long ret, int err, const char *note)
{
    if (!H.trace) return;
    if (ret < 0) printf("  [%d] %s = -1 %s%s\n", k, desc, errname(err), note);
    else printf("  [%d] %s = %ld%s\n", k, desc, ret, note);
    fflush(stdout);
}

/* Is the call at entry one the harness cannot follow? Names it if so. Before
 * the saver's call (ARMED 0: the program starting, the loader and the
 * libraries) only what reaches another process, or cannot be followed at
 * all, is refused. */
static const char *unfollowable(pid_t pid, int mem, const struct __ptrace_syscall_info *si, const fs_call *c,
                                int armed)
{
    if (si->arch != HARNESS_ARCH) return "a 32-bit system call (int 0x80)";
#ifdef __X32_SYSCALL_BIT
    if (si->entry.nr & __X32_SYSCALL_BIT) return "an x32 system call";
#endif
    const unsigned long *a = (const unsigned long *)si->entry.args;
    if (c && c->kind == K_DENY) return c->name;
    if (!armed) return NULL;
    if (c && c->kind == K_OPEN) {   /* /proc: another process's memory or descriptors, the harness's own */
        char path[64];
        child_str(mem, (unsigned long)si->entry.args[(int)c->path], path, sizeof path);
        if (!strncmp(path, "/proc/", 6) || !strcmp(path, "/proc")) return "open of /proc";
    }
    if (si->entry.nr == SYS_mmap && (int)a[4] >= 0 && (a[3] & (MAP_SHARED | MAP_SHARED_VALIDATE)))
        return "mmap (a shared mapping of a file)";
    if (si->entry.nr == SYS_ioctl && (long)(int)a[0] != MARK_FD) {
        struct stat st;
        if (fd_stat(pid, (long)(int)a[0], &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
            return "ioctl (on a file)";
    }
    return NULL;
}

/* PATH's inode now. */
static int path_inode(dev_t *dev, ino_t *ino)
{
    struct stat st;
    if (stat(H.path, &st) != 0) return 0;
    *dev = st.st_dev; *ino = st.st_ino;
    return 1;
}

static void entry(pid_t pid, int mem, const struct __ptrace_syscall_info *si, in_call *ic, int armed)
{
    const fs_call *c = fs_call_of((long)si->entry.nr);
    const char *no = unfollowable(pid, mem, si, c, armed);
    regs_t r;
    memset(ic, 0, sizeof *ic);
    if (no) {
        deny(no);
        if (H.trace) { printf("  [-] %s   <- refused (ENOSYS): the harness cannot follow it\n", no); fflush(stdout); }
        ic->refused = ENOSYS;
    } else {
        if (!c || c->kind == K_DENY) return;
        ic->c = c;
        if (!armed) return;   /* the program starting: its opens are checked at exit, nothing is counted */
        for (int i = 0; i < 6; i++) ic->a[i] = (unsigned long)si->entry.args[i];
        describe(pid, mem, c, ic->a, ic->desc, sizeof ic->desc);
        ic->k = ++H.count;
        if (H.mode == INJ_CRASH && ic->k == H.at) {
            if (H.trace) printf("  [%d] %s   <- crash: the process is killed before this call\n", ic->k, ic->desc);
            printf("save: crash at call %d: %s\n", ic->k, ic->desc);
            fflush(stdout);
            kill(pid, SIGKILL);
            waitpid(pid, NULL, __WALL);
            raise(SIGKILL);   /* the harness too: its exit status says the save was cut */
        }
        if (H.mode == INJ_FAIL && ic->k == H.at) {
            H.fired = ic->k;
            snprintf(H.fired_desc, sizeof H.fired_desc, "%s", ic->desc);
            if (c->kind == K_CLOSE) ic->fail_after = H.err;
            else ic->refused = H.err;
        }
        if (c->kind == K_NAME) ic->path_had = path_inode(&ic->path_dev, &ic->path_ino);
        struct stat st;
        long fd = c->fd >= 0 ? (long)(int)ic->a[(int)c->fd] : -1;
        if ((c->kind == K_WRITE || c->kind == K_TRUNC || c->kind == K_SYNC) && fd_stat(pid, fd, &st) == 0) {
            ic->dev = st.st_dev; ic->ino = st.st_ino;
            ic->wrote_file = S_ISREG(st.st_mode);
            if (c->kind == K_SYNC && S_ISDIR(st.st_mode)) ic->wrote_file = 2;
        }
        if (c->kind == K_TRUNCP) {
            char s[PATH_MAX];
            if (stat(child_str(mem, ic->a[0], s, sizeof s), &st) == 0) { ic->dev = st.st_dev; ic->ino = st.st_ino; ic->wrote_file = 1; }
        }
        /* The first write to each open regular file: half the bytes. */
        if (!ic->refused && c->kind == K_WRITE && ic->wrote_file && fd >= 0 && fd < MAX_FD && !H.written[fd]) {
            H.written[fd] = 1;
            unsigned long n = ic->a[(int)c->n];
            if (n > 1 && get_regs(pid, &r) == 0) { set_arg(&r, c->n, (n + 1) / 2); set_regs(pid, &r); }
        }
    }
    if (ic->refused && get_regs(pid, &r) == 0) { set_nr(&r, -1); set_regs(pid, &r); }
}

static void note_write(pid_t pid, const in_call *ic, int k)
{
    inode_rec *f = inode_of(ic->dev, ic->ino);
    if (!f) return;
    f->last_write = k;
    long fd = ic->c->fd >= 0 ? (long)(int)ic->a[(int)ic->c->fd] : -1;
    int fl = fd >= 0 ? fd_flags(pid, fd) : -1;   /* O_SYNC / O_DSYNC: the write itself is flushed */
    if (fl != -1 && (fl & O_DSYNC)) f->last_sync = k;
}

/* Is the tracee's new descriptor FD a file of /proc it may not hold? In the
 * saver's call (ARMED), any; before it, another process's (its command
 * line, environment, memory: the harness's, or its launcher's). Decided by
 * what the descriptor is, not by how the path was spelled. */
static int proc_refused(pid_t pid, long fd, int armed)
{
    char p[64], t[PATH_MAX];
    struct statfs sf;
    snprintf(p, sizeof p, "/proc/%d/fd/%ld", (int)pid, fd);
    if (statfs(p, &sf) != 0 || sf.f_type != PROC_SUPER_MAGIC) return 0;
    if (armed) return 1;
    ssize_t n = readlink(p, t, sizeof t - 1);
    if (n <= 0) return 1;
    t[n] = 0;
    if (strncmp(t, "/proc/", 6)) return 1;     /* a /proc mounted elsewhere */
    if (t[6] < '0' || t[6] > '9') return 0;    /* /proc/cpuinfo, /proc/sys/...: no process's */
    return strtol(t + 6, NULL, 10) != (long)pid;
}

/* At the exit stop of the call that opened FD: the tracee closes it (rewound
 * to the call's instruction, which then makes close(FD)), and the call
 * returns -1 with ENOSYS, as if refused at its entry. */
static void close_in_tracee(pid_t pid, long fd)
{
#if defined(__x86_64__)
    regs_t saved, r;
    int st;
    if (get_regs(pid, &saved) != 0) return;
    r = saved;
    r.rip -= 2;   /* the syscall instruction: 2 bytes (a 32-bit call is refused at entry) */
    r.rax = SYS_close;
    r.rdi = (unsigned long long)fd;
    set_regs(pid, &r);
    for (int stops = 0; stops < 2;) {   /* close's entry, then its exit */
        if (ptrace(PTRACE_SYSCALL, pid, 0, 0) != 0 || waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st)) return;
        if (WSTOPSIG(st) == (SIGTRAP | 0x80)) stops++;
    }
    set_ret(&saved, -ENOSYS);
    set_regs(pid, &saved);
#else
    (void)pid; (void)fd;
#endif
}

static void leave(pid_t pid, const struct __ptrace_syscall_info *si, const in_call *ic)
{
    long ret = (long)si->exit.rval;
    int err = ret < 0 && ret > -4096 ? (int)-ret : 0;
    const fs_call *c = ic->c;
    if (ic->refused || ic->fail_after) {
        regs_t r;
        int e = ic->refused ? ic->refused : ic->fail_after;
        if (get_regs(pid, &r) == 0) { set_ret(&r, -e); set_regs(pid, &r); }
        if (c) show(ic->k, ic->desc, -1, e, "   <- injected failure");
        if (ic->refused) return;
        err = 0;   /* the close was made: its effect below */
    } else if (c && c->kind == K_OPEN && ret >= 0 && proc_refused(pid, ret, ic->k != 0)) {
        close_in_tracee(pid, ret);
        deny("open of /proc");
        if (ic->k) H.count--;   /* refused: not one of the saver's calls */
        if (H.trace) { printf("  [-] open of /proc   <- refused (ENOSYS): the harness cannot follow it\n"); fflush(stdout); }
        return;
    } else if (c && ic->k) show(ic->k, ic->desc, err ? -1 : ret, err, "");
    if (!c || err || !ic->k) return;
    int k = ic->k;
    switch (c->kind) {
    case K_OPEN: if (ret >= 0 && ret < MAX_FD) H.written[ret] = 0; break;
    case K_WRITE: if (ret > 0 && ic->wrote_file) note_write(pid, ic, k); break;
    case K_TRUNC: case K_TRUNCP: if (ic->wrote_file) note_write(pid, ic, k); break;
    case K_SYNC:
        if (ic->wrote_file == 2) {
            if (ic->dev == H.dir_dev && ic->ino == H.dir_ino && H.ndirsyncs < MAX_DIRSYNCS) H.dirsyncs[H.ndirsyncs++] = k;
        } else if (ic->wrote_file) {
            inode_rec *f = inode_of(ic->dev, ic->ino);
            if (f) f->last_sync = k;
        }
        break;
    case K_CLOSE: {
        unsigned long lo = ic->a[0], hi = c->nr == SYS_close_range ? ic->a[1] : ic->a[0];
        if (c->nr == SYS_close_range && (ic->a[2] & 4 /* CLOSE_RANGE_CLOEXEC */)) break;
        for (unsigned long fd = lo; fd <= hi && fd < MAX_FD; fd++) H.written[fd] = 0;
        break;
    }
    case K_NAME: {
        /* A file put at PATH by this call (a rename, a link): the durability
         * rules follow its inode. */
        dev_t dev; ino_t ino;
        if (path_inode(&dev, &ino) && (!ic->path_had || dev != ic->path_dev || ino != ic->path_ino) &&
            H.nrenames < MAX_RENAMES) {
            rename_rec *rr = &H.renames[H.nrenames++];
            rr->idx = k; rr->dev = dev; rr->ino = ino;
            snprintf(rr->desc, sizeof rr->desc, "%s", ic->desc);
        }
        break;
    }
    default: break;
    }
}

/* ------------------------------------------------------------ the saver's process */

typedef struct { int done, rc, err; } saver_result;
static saver_result R;   /* what the saver's process reported: my_save's value and errno */

/* The saver's process reports on this descriptor, a pipe to the harness: a
 * byte when the call starts, then its saver_result. */
enum { RESULT_FD = 3 };

/* The saver's command line: which call, the version it saves (its number
 * and body size: the process makes the bytes itself; 0, an empty save) and
 * the path. Nothing else of the harness. */
static char **saver_argv(const char *call, int version, size_t body, const char *path)
{
    static char v[16], b[32], p[PATH_MAX + 32];
    static char *argv[] = { "collkit-saver", "save", "--as-saver", NULL, v, b, p, NULL };
    argv[3] = (char *)call;
    snprintf(v, sizeof v, "%d", version);
    snprintf(b, sizeof b, "%zu", body);
    snprintf(p, sizeof p, "%s", path);
    return argv;
}

/* The saver's environment: the harness's, but only the variables a program
 * needs to start and run (the locale, the library path, the sanitizers'
 * options; GRADE_TEST_*, the test suite's choice of a fixture's flaw), and
 * OpenBLAS held to one thread: the program starts no thread of its own. */
static char **saver_env(void)
{
    extern char **environ;
    static const char *const keep[] = { "PATH=", "HOME=", "TMPDIR=", "TZ=", "LANG=", "LC_", "LD_LIBRARY_PATH=",
                                        "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=", "GRADE_TEST_" };
    static char *env[64];
    int n = 0;
    for (char **e = environ; *e && n < 62; e++)
        for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
            if (!strncmp(*e, keep[i], strlen(keep[i]))) { env[n++] = *e; break; }
    env[n++] = "OPENBLAS_NUM_THREADS=1";
    env[n] = NULL;
    return env;
}

/* No capability survives the exec (root's included): the saver cannot
 * read a process that is not dumpable (the harness), nor trace one. */
static void drop_privileges(void)
{
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL) break;
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct { uint32_t version; int pid; } head = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
    struct { uint32_t effective, permitted, inheritable; } none[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
    syscall(SYS_capset, &head, none);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* Starts the saver's process (ARGV: saver_argv), traced from its first
 * instruction when TRACE (stopped before the exec; traced() goes on); *FROM
 * is the pipe it reports on. */
static pid_t launch(char *const argv[], int trace, int *from)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) { fprintf(stderr, "save: pipe: %s\n", strerror(errno)); exit(2); }
    char **env = saver_env();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { fprintf(stderr, "save: fork: %s\n", strerror(errno)); exit(2); }
    if (pid == 0) {
        if (dup2(p[1], RESULT_FD) != RESULT_FD || fcntl(RESULT_FD, F_SETFD, 0) != 0) _exit(3);
        close_range(RESULT_FD + 1, ~0u, 0);
        drop_privileges();
        if (trace && ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) { fprintf(stderr, "save: ptrace: %s\n", strerror(errno)); _exit(3); }
        if (trace) raise(SIGSTOP);
        execve("/proc/self/exe", argv, env);
        fprintf(stderr, "save: cannot start the saver's process (exec /proc/self/exe): %s\n", strerror(errno));
        _exit(3);
    }
    close(p[1]);
    *from = p[0];
    return pid;
}

/* What the saver's process reported on FROM (closed), into R; 1 when the
 * call returned. */
static int reported(int from)
{
    char started = 0;
    memset(&R, 0, sizeof R);
    int ok = read(from, &started, 1) == 1 && started == 'S' && read(from, &R, sizeof R) == (ssize_t)sizeof R;
    close(from);
    if (!ok) memset(&R, 0, sizeof R);
    return ok && R.done == 1;
}

/* Is this system call one of the two marks, made from where the start mark
 * was (the same instruction, the same stack)? Arms and disarms the count. */
static int marked(const struct __ptrace_syscall_info *si, int *armed, uint64_t at[2])
{
    if (si->entry.nr != SYS_ioctl || (long)(int)si->entry.args[0] != MARK_FD) return 0;
    if (si->entry.args[1] == MARK_START && !at[0]) {
        at[0] = si->instruction_pointer; at[1] = si->stack_pointer;
        *armed = 1;
        return 1;
    }
    if (si->entry.args[1] == MARK_END && *armed && si->instruction_pointer == at[0] && si->stack_pointer == at[1]) {
        *armed = 0;
        return 1;
    }
    return 0;   /* a mark from elsewhere: an ioctl like any other */
}

/* Runs the saver's process (ARGV) traced; 0 when its call returned (R),
 * else a phrase in WHY about how the process ended. */
static int traced(char *const argv[], char *why, size_t len)
{
#if !defined(__x86_64__)
    fprintf(stderr, "save: the crash harness traces system calls on x86-64 Linux only\n");
    exit(2);
#endif
    int from, st;
    pid_t pid = launch(argv, 1, &from);
    if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
        close(from);
        snprintf(why, len, "the harness could not trace the save (ptrace: is it forbidden here?)");
        return -1;
    }
    ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC);
    int mem = -1, armed = 0, sig = 0, ended = 0;
    uint64_t mark_at[2] = { 0, 0 };
    in_call ic;
    memset(&ic, 0, sizeof ic);
    for (;;) {
        if (ptrace(PTRACE_SYSCALL, pid, 0, sig) != 0) break;
        sig = 0;
        if (waitpid(pid, &st, __WALL) != pid) break;
        if (WIFEXITED(st) || WIFSIGNALED(st)) { ended = 1; break; }
        if (!WIFSTOPPED(st)) continue;
        if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {   /* the new program: its memory from here */
            char mp[64];
            snprintf(mp, sizeof mp, "/proc/%d/mem", (int)pid);
            if ((mem = open(mp, O_RDONLY | O_CLOEXEC)) < 0) {   /* no call could be described: stop */
                fprintf(stderr, "save: %s: %s (the harness reads the saver's arguments there)\n", mp, strerror(errno));
                kill(pid, SIGKILL);
                waitpid(pid, NULL, __WALL);
                exit(2);
            }
            continue;
        }
        if (WSTOPSIG(st) != (SIGTRAP | 0x80)) { sig = WSTOPSIG(st) == SIGSTOP ? 0 : WSTOPSIG(st); continue; }
        if (mem < 0) continue;   /* the harness's own code, up to the exec */
        struct __ptrace_syscall_info si;
        if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof si, &si) <= 0) {
            /* Without it no call can be numbered: stop rather than miss them. */
            fprintf(stderr, "save: ptrace(PTRACE_GET_SYSCALL_INFO): %s (the harness needs Linux 5.3 or later)\n",
                    strerror(errno));
            kill(pid, SIGKILL);
            waitpid(pid, NULL, __WALL);
            exit(2);
        }
        if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
            memset(&ic, 0, sizeof ic);
            if (!marked(&si, &armed, mark_at)) entry(pid, mem, &si, &ic, armed);
        } else if (si.op == PTRACE_SYSCALL_INFO_EXIT) {
            leave(pid, &si, &ic);
            memset(&ic, 0, sizeof ic);
        }
    }
    if (!ended) { kill(pid, SIGKILL); waitpid(pid, &st, __WALL); }
    if (mem >= 0) close(mem);
    if (reported(from)) return 0;
    if (WIFSIGNALED(st)) snprintf(why, len, "the process ended by signal %d (SIG%s) inside it", WTERMSIG(st), sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
    else if (WIFEXITED(st)) snprintf(why, len, "the process ended inside it (exit status %d)", WEXITSTATUS(st));
    else snprintf(why, len, "the process ended inside it");
    return -1;
}

/* ------------------------------------------------------------ running the saver */

static void arm(int mode, int at, int err, int trace)
{
    H.count = 0; H.fired = 0; H.fired_desc[0] = 0;
    H.mode = mode; H.at = at; H.err = err; H.trace = trace;
    H.ninodes = H.nrenames = H.ndirsyncs = 0;
    memset(H.written, 0, sizeof H.written);
}
static void disarm(void) { H.mode = INJ_NONE; }

enum { NO_RETURN = INT_MIN };         /* run_save's value when my_save never returned */
static char ended[300];               /* then: how the process ended */

/* my_save(PATH, version VERSION with a body of BODY bytes; 0: no bytes) in
 * the saver's process, with the injection MODE at call AT (errno E). */
static int run_save(const char *path, int version, size_t body, int *err, int mode, int at, int e, int trace,
                    const char *what)
{
    if (trace) { printf("my_save(%s, %s, %zu B):\n", shown(path), what, version ? HEADER + body : 0); fflush(stdout); }
    arm(mode, at, e, trace);
    int ok = traced(saver_argv("save", version, body, path), ended, sizeof ended);
    disarm();
    *err = ok == 0 ? R.err : 0;
    int rc = ok == 0 ? R.rc : NO_RETURN;
    if (trace && ok == 0) { printf("  returned %d%s%s\n", rc, rc ? ", errno " : "", rc ? errname(*err) : ""); fflush(stdout); }
    if (trace && ok != 0) { printf("  did not return: %s\n", ended); fflush(stdout); }
    return rc;
}

/* 0, or -1 when my_recover did not return (ENDED says why). */
static int run_recover(int trace)
{
    if (trace) { printf("my_recover(%s):\n", shown(H.path)); fflush(stdout); }
    arm(INJ_NONE, 0, 0, trace);
    int ok = traced(saver_argv("recover", 0, 0, H.path), ended, sizeof ended);
    disarm();
    return ok;
}
/* ------------------------------------------------------------ versions and verdicts */

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
    if (!dir_only && !H.nrenames && stat(H.path, &st) == 0) {
        inode_rec *f = inode_of(st.st_dev, st.st_ino);
        if (f && f->last_write) {
            snprintf(why, sizeof why, "state.bin was written in place (call %d) and never replaced by a rename: a "
                     "power loss during the save leaves part of each version", f->last_write);
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

/* The refused calls, as a verdict's phrase; NULL when there were none. */
static const char *refused(void)
{
    static char why[400];
    if (!H.ndenied) return NULL;
    int n = snprintf(why, sizeof why, "the save made system calls the harness cannot follow: ");
    for (int i = 0; i < H.ndenied && n < (int)sizeof why; i++)
        n += snprintf(why + n, sizeof why - (size_t)n, "%s%s", i ? ", " : "", H.denied[i]);
    if (n < (int)sizeof why)
        snprintf(why + n, sizeof why - (size_t)n, " (refused with ENOSYS): write the file with open, write, fsync, "
                 "rename and close, in this process");
    return why;
}

/* The run's last line, after a line naming the calls refused (ENOSYS): the
 * kernel made none of them, so the verdict is about what did happen, and the
 * integrity part reads the refusals. */
static int verdict(const char *kind, const char *fmt, ...)
{
    if (refused()) printf("save: REFUSED %s\n", refused());
    va_list ap;
    va_start(ap, fmt);
    printf("save: %s ", kind);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    return strcmp(kind, "PASS") == 0 ? 0 : 1;
}

/* ------------------------------------------------------------ killed at random moments */

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Version 1 at PATH, written by the harness itself: each kill starts from it. */
static int put_v1(void)
{
    int fd = open(H.path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < v1len) {
        ssize_t w = write(fd, v1 + done, v1len - done);
        if (w <= 0) { close(fd); return -1; }
        done += (size_t)w;
    }
    return close(fd);
}

/* The saver's process, which nothing traces: a save as a real process makes
 * it. Returns once the call has started (*T0: then); *FROM is its pipe, to
 * close once it has ended. */
static pid_t start(int recover, double *t0, int *from)
{
    pid_t pid = launch(recover ? saver_argv("recover", 0, 0, H.path) : saver_argv("save", 2, v2len - HEADER, H.path), 0,
                       from);
    char c;
    while (read(*from, &c, 1) < 0 && errno == EINTR) {}
    *t0 = now_us();
    return pid;
}

static const char *how_ended(int st)
{
    static char b[80];
    if (WIFSIGNALED(st)) snprintf(b, sizeof b, "the process ended by signal %d", WTERMSIG(st));
    else if (WEXITSTATUS(st)) snprintf(b, sizeof b, "my_save returned an error");
    else snprintf(b, sizeof b, "my_save returned 0");
    return b;
}

/* N kills (SIGKILL) at moments drawn uniformly over the measured duration
 * of a save of version 2 (from the start of the call to the end of its
 * process). */
static int kill_random(int n, uint32_t seed)
{
    char why[600], left[600];
    double took[3];
    for (int i = 0; i < 3; i++) {
        if (put_v1() != 0) { fprintf(stderr, "save: cannot write %s: %s\n", H.path, strerror(errno)); return 2; }
        int st, from;
        double t0;
        pid_t pid = start(0, &t0, &from);
        waitpid(pid, &st, 0);
        took[i] = now_us() - t0;
        close(from);
        if (!WIFEXITED(st) || WEXITSTATUS(st))
            return verdict("FAIL", "saving version 2 with no kill: %s", how_ended(st));
        int c = contents(why, sizeof why, 0);
        if (c != 2) return verdict("FAIL", "after saving version 2 with no kill, %s", c == 1 ? "state.bin still holds version 1" : why);
        if (litter(left, sizeof left)) return verdict("FAIL", "after saving version 2 with no kill, the directory holds %s", left);
    }
    double lo = took[0] < took[1] ? took[0] : took[1], hi = took[0] < took[1] ? took[1] : took[0];
    double dur = took[2] < lo ? lo : took[2] > hi ? hi : took[2];   /* the median of three */
    uint32_t x = seed ? seed : 1;
    int seen[3] = { 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        if (put_v1() != 0) { fprintf(stderr, "save: cannot write %s: %s\n", H.path, strerror(errno)); return 2; }
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        double at = dur * (double)(x >> 8) / (double)(1u << 24);
        double t0;
        int from;
        pid_t pid = start(0, &t0, &from);
        double wake = t0 + at;
        struct timespec ts = { (time_t)(wake / 1e6), (long)((wake - (double)(time_t)(wake / 1e6) * 1e6) * 1e3) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        close(from);
        int c = contents(why, sizeof why, 0);
        if (c < 0)
            return verdict("FAIL", "killed %.0f us into a save of version 2 (one takes about %.0f us; kill %d of %d, "
                           "--seed %u): %s: it must hold version 1 or version 2, whole", at, dur, i + 1, n, seed, why);
        if (WIFSIGNALED(st)) seen[c]++; else seen[0]++;
        waitpid(pid = start(1, &t0, &from), &st, 0);
        close(from);
        int now = contents(why, sizeof why, 0);
        if (now != c)
            return verdict("FAIL", "killed %.0f us into a save of version 2 (--seed %u), state.bin held version %d; then "
                           "my_recover changed it: %s", at, seed, c, now < 0 ? why : "it holds the other version now");
        if (litter(left, sizeof left))
            return verdict("FAIL", "killed %.0f us into a save of version 2 (--seed %u): after my_recover the directory "
                           "still holds %s beside state.bin", at, seed, left);
    }
    return verdict("PASS", "killed at %d random moments of a save of version 2 (%zu B, about %.0f us; --seed %u): "
                   "state.bin was version 1 %d times, version 2 %d times, whole (%d saves ended first); my_recover "
                   "left only state.bin", n, v2len, dur, seed, seen[1], seen[2], seen[0]);
}

/* Before any injection: my_recover, then version 1 saved and checked. */
static int prepare(int trace)
{
    char why[600], left[600];
    if (run_recover(trace) != 0) return verdict("FAIL", "my_recover in an empty directory did not return: %s", ended);
    int e, rc = run_save(H.path, 1, OLD_BODY, &e, INJ_NONE, 0, 0, 0, "version 1");
    if (rc == NO_RETURN) return verdict("FAIL", "saving version 1 (no fault injected): my_save did not return: %s", ended);
    if (rc != 0) return verdict("FAIL", "saving version 1 (no fault injected): my_save returned %d (%s)", rc, errname(e));
    if (contents(why, sizeof why, 0) != 1) return verdict("FAIL", "after saving version 1 (no fault injected), %s", why);
    if (litter(left, sizeof left))
        return verdict("FAIL", "after saving version 1 (no fault injected), the directory holds %s beside state.bin", left);
    return -1;
}

/* ------------------------------------------------------------ options */

typedef struct save_opts {
    const char *dir;
    long        size, crash_at, fail_at, kills, seed;   /* seed -1: from the clock */
    int         err;                                   /* --errno */
    int         count, verify, edge, trace;
    int         mode, at;                              /* the injection: INJ_*, at call AT */
} save_opts;

/* A whole number in [lo, hi], in the tools' one integer syntax: no white
 * space, no junk after it. */
static int whole_in(const char *v, long lo, long hi, void *field, char *err, size_t cap)
{
    long long n;
    if (ck_parse_int(v, lo, hi, &n, NULL, 0)) {
        snprintf(err, cap, "expected a whole number from %ld to %ld", lo, hi);
        return -1;
    }
    *(long *)field = (long)n;
    return 0;
}
static int size_value(const char *v, void *f, char *e, size_t c) { return whole_in(v, 0, 64L << 20, f, e, c); }
static int call_value(const char *v, void *f, char *e, size_t c) { return whole_in(v, 1, 1000000, f, e, c); }
static int kills_value(const char *v, void *f, char *e, size_t c) { return whole_in(v, 1, 100000, f, e, c); }
static int seed_value(const char *v, void *f, char *e, size_t c) { return whole_in(v, 0, UINT32_MAX, f, e, c); }

static int errno_value(const char *v, void *field, char *err, size_t cap)
{
    if (!strcmp(v, "ENOSPC")) *(int *)field = ENOSPC;
    else if (!strcmp(v, "EIO")) *(int *)field = EIO;
    else {
        snprintf(err, cap, "expected ENOSPC or EIO");
        return -1;
    }
    return 0;
}

#define WHOLE(fn) CK_OPT_CUSTOM, .size = sizeof(long), .parse = fn
static const ck_opt options[] = {
    {"--dir", 0, CK_OPT_STR, offsetof(save_opts, dir), .arg = "DIR", .flags = CK_OPT_HIDE},
    {"--size", 0, WHOLE(size_value), .off = offsetof(save_opts, size), .arg = "BYTES", .flags = CK_OPT_HIDE},
    {"--crash-at", 0, WHOLE(call_value), .off = offsetof(save_opts, crash_at), .arg = "K",
     .help = "kill the process before the saver's K-th file-system call"},
    {"--fail-at", 0, WHOLE(call_value), .off = offsetof(save_opts, fail_at), .arg = "K",
     .help = "make that call fail instead (errno ENOSPC, or --errno EIO)"},
    {"--errno", 0, CK_OPT_CUSTOM, offsetof(save_opts, err), .size = sizeof(int), .parse = errno_value,
     .arg = "ENOSPC|EIO", .flags = CK_OPT_HIDE},
    {"--count", 0, CK_OPT_FLAG, offsetof(save_opts, count),
     .help = "print how many calls one save of version 2 makes (K goes 1..that)"},
    {"--verify", 0, CK_OPT_FLAG, offsetof(save_opts, verify),
     .help = "after a crash: state.bin must be version 1 or 2; then my_recover must\n"
             "leave state.bin alone in DIR"},
    {"--edge", 0, CK_OPT_FLAG, offsetof(save_opts, edge),
     .help = "an empty save (0 bytes) and a save into a directory that does not exist"},
    {"--kill-random", 0, WHOLE(kills_value), .off = offsetof(save_opts, kills), .arg = "N",
     .help = "kill the save of version 2 (SIGKILL, not traced) at N random moments of\n"
             "its measured duration; each time state.bin must be one version, whole,\n"
             "and my_recover must leave it alone in DIR (--seed S: the same moments)"},
    {"--seed", 0, WHOLE(seed_value), .off = offsetof(save_opts, seed), .arg = "S", .flags = CK_OPT_HIDE},
    {"--trace", 0, CK_OPT_FLAG, offsetof(save_opts, trace), .help = "print every call the saver makes, numbered"},
    {NULL},
};
#undef WHOLE
enum { NOPTIONS = sizeof options / sizeof options[0], CRASH_AT = 2, FAIL_AT = 3 };

static int usage(void)
{
    fprintf(stderr,
            "usage: PROG save --dir DIR [--size BYTES] [--crash-at K | --fail-at K [--errno ENOSPC|EIO]]\n"
            "                 [--count] [--verify] [--edge] [--kill-random N [--seed S]] [--trace]\n"
            "  Runs the registered saver (CK_REGISTER_SAVER) on DIR/state.bin, DIR an empty directory:\n"
            "  my_recover, version 1 saved, then version 2 saved under the harness (body BYTES, default 4099).\n"
            "  Every call runs in a fresh process (this program started again, told nothing of the\n"
            "  injection) traced at the system-call level (ptrace): the calls\n"
            "  that open, write, truncate, flush, name or close files are numbered, however the save\n"
            "  makes them; io_uring, AIO, shared file mappings, ioctl on files and new processes or\n"
            "  threads are refused (ENOSYS) and named on a line of their own (save: REFUSED).\n");
    ck_opt_help(stderr, options, NULL);
    return 2;
}

/* Returns -1 to go on, else the exit status (2: bad arguments, said). */
static int parse(int argc, char **argv, save_opts *o)
{
    *o = (save_opts){.size = 4099, .seed = -1, .err = ENOSPC, .mode = INJ_NONE};
    const char *given[NOPTIONS] = {0};
    char err[300];
    const int rc = ck_opt_parse(options, argc, argv, o, given, err, sizeof err);
    if (rc == CK_OPT_HELP) return usage();
    if (rc == CK_OPT_BAD) {
        /* the harness's words since lab 06 began: an option it does not know, or one without its value */
        if (!strncmp(err, "unknown option ", 15)) fprintf(stderr, "save: unknown or incomplete option %s\n", err + 15);
        else fprintf(stderr, "save: %s\n", err);
        /* a value refused ("--size 'x': expected ...") is said alone; the usage follows the rest */
        const int bad_value = !strncmp(err, "--", 2) && strstr(err, "': ");
        return bad_value ? 2 : usage();
    }
    if (given[CRASH_AT] && given[FAIL_AT]) {
        fprintf(stderr, "save: --crash-at and --fail-at: one injection per run\n");
        return 2;
    }
    o->mode = given[CRASH_AT] ? INJ_CRASH : given[FAIL_AT] ? INJ_FAIL : INJ_NONE;
    o->at = (int)(given[CRASH_AT] ? o->crash_at : o->fail_at);
    if (!o->dir || !*o->dir) { fprintf(stderr, "save: --dir DIR is required\n"); return usage(); }
    if (o->count + o->verify + o->edge + (o->mode != INJ_NONE) + (o->kills > 0) > 1) {
        fprintf(stderr, "save: --count, --verify, --edge, --kill-random and an injection (--crash-at, --fail-at) "
                        "are separate runs\n");
        return 2;
    }
    return -1;
}

/* DIR a directory, H.dir and H.path set: 0, or 2 after saying why. */
static int open_dir(const char *dir)
{
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
    if (!realpath(dirbuf, H.realdir)) H.realdir[0] = 0;
    return 0;
}

/* --verify: after a crash, state.bin is one version, whole, and my_recover
 * leaves it alone in DIR. */
static int verify(int trace)
{
    char why[600], left[600];
    int was = contents(why, sizeof why, 0);
    if (was < 0) return verdict("FAIL", "%s: it must hold version 1 or version 2, whole", why);
    if (run_recover(trace) != 0) return verdict("FAIL", "my_recover did not return: %s", ended);
    int now = contents(why, sizeof why, 0);
    if (now != was) return verdict("FAIL", "my_recover changed state.bin: %s", now < 0 ? why : "it holds the other version now");
    if (litter(left, sizeof left))
        return verdict("FAIL", "state.bin holds version %d, but after my_recover the directory still holds %s: "
                       "my_recover must remove the temporary files a killed save left", was, left);
    return verdict("PASS", "state.bin holds version %d, whole; my_recover left only state.bin", was);
}

/* --edge: a save into a directory that does not exist fails, with errno and
 * nothing created; a save of 0 bytes leaves an empty state.bin. */
static int edge(int trace)
{
    static const char missing_name[] = "no-such-dir";
    char missing[PATH_MAX + 32], where[PATH_MAX + 16], why[600], left[600];
    snprintf(missing, sizeof missing, "%s/%s/state.bin", H.dir, missing_name);
    snprintf(where, sizeof where, "%s/%s", H.dir, missing_name);
    int e;
    int mrc = run_save(missing, 2, v2len - HEADER, &e, INJ_NONE, 0, 0, trace, "version 2"), me = e;
    struct stat ms;
    if (mrc == NO_RETURN) return verdict("FAIL", "a save into a directory that does not exist did not return: %s", ended);
    if (mrc == 0) return verdict("FAIL", "a save into a directory that does not exist (%s/state.bin) returned 0", missing_name);
    if (me == 0) return verdict("FAIL", "a save into a directory that does not exist returned %d without setting errno", mrc);
    if (stat(where, &ms) == 0) return verdict("FAIL", "a save into a directory that does not exist created %s", missing_name);
    int rc = run_save(H.path, 0, 0, &e, INJ_NONE, 0, 0, trace, "0 bytes");
    if (rc == NO_RETURN) return verdict("FAIL", "saving 0 bytes: my_save did not return: %s", ended);
    if (rc != 0) return verdict("FAIL", "saving 0 bytes returned %d (%s): an empty file is a valid save", rc, errname(e));
    int c = contents(why, sizeof why, 1);
    if (c != 0) return verdict("FAIL", "after saving 0 bytes, %s; expected an empty file",
                               c < 0 ? why : c == 1 ? "state.bin still holds version 1" : "state.bin holds version 2");
    if (litter(left, sizeof left)) return verdict("FAIL", "after saving 0 bytes, the directory holds %s beside state.bin", left);
    return verdict("PASS", "a save into a missing directory returned %d (%s); saving 0 bytes left an empty state.bin",
                   mrc, errname(me));
}

/* What the save of version 2 left, for the verdicts below. */
typedef struct outcome {
    int         rc, e;          /* my_save's return value and errno */
    int         c;              /* contents(): the version state.bin holds, or < 0 (why) */
    int         n_left;         /* litter(): files beside state.bin (left) */
    const char *broken;         /* rules(): a durability rule broken, or NULL */
    char        why[600], left[600];
} outcome;

/* The save after an injected failure at call H.fired: a failure reported
 * leaves the version it must, and nothing else; 0 means the save was made
 * anyway, whole and durable. */
static int judge_failure(const outcome *u, int err)
{
    int k = H.fired, after_rename = 0;
    for (int i = 0; i < H.nrenames; i++) if (H.renames[i].idx < k) after_rename = 1;
    const char *d = H.fired_desc, *en = errname(err);
    if (u->rc == 0) {
        if (u->c != 2) return verdict("FAIL", "my_save returned 0 although %s at call %d failed (%s): %s", d, k, en, u->why);
        if (u->n_left) return verdict("FAIL", "my_save returned 0 although %s at call %d failed (%s), and left %s", d, k, en, u->left);
        if (u->broken) return verdict("FAIL", "my_save returned 0 although %s at call %d failed (%s): %s", d, k, en, u->broken);
        return verdict("PASS", "%s at call %d failed (%s); my_save made the save anyway, whole and durable", d, k, en);
    }
    if (u->e == 0) return verdict("FAIL", "my_save returned %d without setting errno after %s at call %d failed (%s)", u->rc, d, k, en);
    int want = after_rename ? 2 : 1;
    if (u->c != want) {
        const char *was = u->c == 1 ? "state.bin holds version 1" : u->c == 2 ? "state.bin holds version 2" : u->why;
        return verdict("FAIL", "after %s at call %d failed (%s), my_save returned %d but %s (it must be %s)", d, k, en,
                       u->rc, was, want == 1 ? "as it was: version 1" : "version 2: the rename was made");
    }
    if (u->n_left)
        return verdict("FAIL", "after %s at call %d failed (%s), my_save returned %d but left %s in the directory "
                       "(a failed save removes its temporary file)", d, k, en, u->rc, u->left);
    return verdict("PASS", "%s at call %d failed (%s): my_save returned %d, state.bin is version %d, nothing left",
                   d, k, en, u->rc, want);
}

/* The save with nothing injected (or a crash past its last call): version 2,
 * whole, nothing beside it, the durability rules kept. */
static int judge_save(const outcome *u, int mode, int calls)
{
    const char *how = mode == INJ_CRASH ? "with no crash (the save makes fewer calls)" : "with no fault injected";
    if (u->rc != 0) return verdict("FAIL", "saving version 2 %s: my_save returned %d (%s)", how, u->rc, errname(u->e));
    if (u->c != 2)
        return verdict("FAIL", "after saving version 2 %s, %s", how, u->c == 1 ? "state.bin still holds version 1" : u->why);
    if (u->n_left) return verdict("FAIL", "after saving version 2 %s, the directory holds %s beside state.bin", how, u->left);
    if (u->broken) return verdict("RULES", "%s", u->broken);
    return verdict("PASS", "version 2 saved in %d calls: fsync before the rename, the directory's fsync after", calls);
}

/* Version 2 saved under the harness (a crash or failure at o->at, or
 * counted), then judged. */
static int save_v2(const save_opts *o)
{
    outcome u;
    u.rc = run_save(H.path, 2, v2len - HEADER, &u.e, o->mode, o->at, o->err, o->trace, "version 2");
    if (u.rc == NO_RETURN)
        return verdict("FAIL", "saving version 2%s%s: my_save did not return: %s", H.fired ? " after a failure of " : "",
                       H.fired ? H.fired_desc : "", ended);
    const int calls = H.count;
    u.c = contents(u.why, sizeof u.why, 0);
    u.n_left = litter(u.left, sizeof u.left);
    u.broken = rules(H.fired != 0);
    if (o->count) {
        if (u.rc != 0) return verdict("FAIL", "saving version 2 (no fault injected) returned %d (%s)", u.rc, errname(u.e));
        if (refused()) printf("save: REFUSED %s\n", refused());
        printf("save: COUNT %d (one save of version 2 makes %d file-system calls: --crash-at and --fail-at "
               "take 1..%d)\n", calls, calls, calls);
        return 0;
    }
    return H.fired ? judge_failure(&u, o->err) : judge_save(&u, o->mode, calls);
}

/* ------------------------------------------------------------ the saver's side */

/* The one call, between the two marks, made from here alone (marked()). */
static __attribute__((noinline)) void run_call(int save, const char *path, const void *data, size_t n)
{
    mark(MARK_START);
    if (save) {
        errno = 0;
        R.rc = saver_save(path, data, n);
        R.err = errno;
    } else saver_recover(path);
    mark(MARK_END);
    __asm__ volatile("" ::: "memory");   /* not a tail call: the end mark from this frame, as the start's */
}

/* The saver's process (PROG save --as-saver save|recover VERSION BODY PATH,
 * started by launch()): the bytes of the version, the call, its result on
 * RESULT_FD. */
static int saver_process(int argc, char **argv)
{
    long long version, body;
    if (argc != 6 || (strcmp(argv[2], "save") && strcmp(argv[2], "recover")) ||
        ck_parse_int(argv[3], 0, 2, &version, NULL, 0) || ck_parse_int(argv[4], 0, 64LL << 20, &body, NULL, 0)) {
        fprintf(stderr, "save: --as-saver is how the harness starts a saver's process, not an option\n");
        return 2;
    }
    if (!saver_save) { fprintf(stderr, "save: no saver in this program\n"); return 2; }
    setvbuf(stdout, NULL, _IOLBF, 0);   /* the saver's own lines, in order with the trace */
    size_t n = 0;
    const void *data = version ? (const void *)make_version((uint32_t)version, (size_t)body, &n) : (const void *)"";
    if (write(RESULT_FD, "S", 1) != 1) _exit(3);
    run_call(!strcmp(argv[2], "save"), argv[5], data, n);
    R.done = 1;
    if (write(RESULT_FD, &R, sizeof R) != (ssize_t)sizeof R) _exit(3);
    fflush(NULL);
    _exit(R.rc == 0 ? 0 : 1);
}

/* A seed for --kill-random nobody can foresee (the moments must not be
 * known to the save). */
static uint32_t fresh_seed(void)
{
    uint32_t s;
    if (getrandom(&s, sizeof s, 0) == (ssize_t)sizeof s) return s;
    return (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
}

int save_main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--as-saver")) return saver_process(argc, argv);
    save_opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;
    if (open_dir(o.dir)) return 2;
    /* The injection is the harness's alone: its command line is wiped once
     * read (/proc/PID/cmdline shows what is left), and its memory cannot be
     * read by another process of its user (not dumpable). */
    for (int i = 1; i < argc; i++) memset(argv[i], 0, strlen(argv[i]));
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    setvbuf(stdout, NULL, _IOLBF, 0);
    v1 = make_version(1, OLD_BODY, &v1len);
    v2 = make_version(2, (size_t)o.size, &v2len);
    if (o.verify) return verify(o.trace);
    if (o.kills) {
        char left[600];
        if (litter(left, sizeof left)) { fprintf(stderr, "save: --dir %s holds %s: --kill-random needs an empty directory\n", H.dir, left); return 2; }
        return kill_random((int)o.kills, o.seed >= 0 ? (uint32_t)o.seed : fresh_seed());
    }
    rc = prepare(o.trace && !o.edge);
    if (rc >= 0) return rc;
    return o.edge ? edge(o.trace) : save_v2(&o);
}
