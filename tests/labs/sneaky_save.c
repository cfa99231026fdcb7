/*
 * sneaky_save.c — lab 06: saves that overwrite state.bin in place (torn by
 * a kill at the wrong moment), through calls that no link-time wrapper
 * sees. The harness traces system calls, so each
 * must lose the parts about what it breaks (an in-place save keeps only the
 * integrity part: nothing it calls is forbidden). GRADE_TEST_SAVE picks one:
 *   mknod    mknod, the fortified __open_2 with O_TRUNC, dprintf, close_range
 *   rawsys   openat/write/close as inline-asm system calls (x86-64; elsewhere
 *            through syscall())
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "collkit_save.h"

int __open_2(const char *path, int flags);

static int variant(const char *name)
{
    const char *v = getenv("GRADE_TEST_SAVE");
    return v && !strcmp(v, name);
}

/* Four arguments: openat's mode is the fourth (r10). Left out, the file's
 * mode is whatever the register held, and a later save without the
 * capabilities the saver's process drops cannot open it again. */
static long raw4(long nr, long a, long b, long c, long d)
{
#if defined(__x86_64__)
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    if (r < 0 && r > -4096) { errno = (int)-r; return -1; }
    return r;
#else
    return syscall(nr, a, b, c, d);
#endif
}

static long raw3(long nr, long a, long b, long c) { return raw4(nr, a, b, c, 0); }

/* In place: the old contents are gone from the first call that writes. */
static int save_mknod(const char *path, const unsigned char *p, size_t n)
{
    if (mknod(path, S_IFREG | 0644, 0) != 0 && errno != EEXIST) return -1;
    int fd = __open_2(path, O_WRONLY | O_TRUNC);
    if (fd < 0) return -1;
    /* dprintf writes text: each run of bytes up to a zero, then the zero. */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && p[j]) j++;
        if (j > i && dprintf(fd, "%.*s", (int)(j - i), (const char *)p + i) != (int)(j - i)) goto fail;
        if (j < n && dprintf(fd, "%c", 0) != 1) goto fail;
        i = j + 1;
    }
    if (fsync(fd) != 0) goto fail;
    return close_range((unsigned)fd, (unsigned)fd, 0) == 0 ? 0 : -1;
fail:;
    int e = errno;
    close_range((unsigned)fd, (unsigned)fd, 0);
    errno = e;
    return -1;
}

static int save_raw(const char *path, const unsigned char *p, size_t n)
{
    long fd = raw4(SYS_openat, AT_FDCWD, (long)path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    while (n > 0) {
        long w = raw3(SYS_write, fd, (long)p, (long)n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) { int e = errno; raw3(SYS_close, fd, 0, 0); errno = e; return -1; }
        p += w;
        n -= (size_t)w;
    }
    if (raw3(SYS_fsync, fd, 0, 0) != 0) return -1;
    return raw3(SYS_close, fd, 0, 0) == 0 ? 0 : -1;
}

static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, len, ".");
    else snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

int my_save(const char *path, const void *data, size_t n)
{
    if (variant("rawsys")) return save_raw(path, data, n);
    return save_mknod(path, data, n);
}

void my_recover(const char *path)
{
    char dir[PATH_MAX], prefix[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    const char *base = strrchr(path, '/');
    snprintf(prefix, sizeof prefix, "%s.tmp.", base ? base + 1 : path);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *ent;
    while ((ent = readdir(d)))
        if (!strncmp(ent->d_name, prefix, strlen(prefix))) unlinkat(dirfd(d), ent->d_name, 0);
    closedir(d);
}

CK_REGISTER_SAVER(my_save, my_recover)
