/*
 * flawed_save.c — lab 06's reference save with one flaw, chosen at run time
 * by GRADE_TEST_SAVE (labs/CMakeLists.txt): each must cost the grade part
 * that is about it, with a verdict that names it.
 *   no_fsync     renames the temporary file without flushing it   (durability)
 *   no_dirsync   never flushes the directory after the rename     (durability)
 *   ignore_write takes a failed write for the end of the data     (faults)
 *   leave_temp   returns -1 on a failure but keeps its temp file  (faults)
 *   no_recover   my_recover does nothing                          (crash)
 *   uring        first tries io_uring_setup (an inline-asm system
 *                call: no symbol), then saves as it should   (integrity:
 *                the harness refuses the call and names it)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collkit_save.h"

static int flaw(const char *name)
{
    const char *f = getenv("GRADE_TEST_SAVE");
    return f && !strcmp(f, name);
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && flaw("ignore_write")) return 0;
        if (w < 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, len, ".");
    else snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* io_uring_setup(8, params) as a bare system call; its result is not used:
 * the save goes on either way, as one that falls back from io_uring would. */
static void try_uring(void)
{
#if defined(__x86_64__)
    unsigned char params[120] = {0};
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(425L), "D"(8L), "S"(params) : "rcx", "r11", "memory");
    (void)r;
#endif
}

int my_save(const char *path, const void *data, size_t n)
{
    if (flaw("uring")) try_uring();
    char tmp[PATH_MAX], dir[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644), e;
    if (fd < 0) return -1;
    if (write_all(fd, data, n) != 0 || (!flaw("no_fsync") && fsync(fd) != 0)) {
        e = errno;
        close(fd);
        goto fail;
    }
    if (close(fd) != 0) { e = errno; goto fail; }
    if (rename(tmp, path) != 0) { e = errno; goto fail; }
    if (flaw("no_dirsync")) return 0;
    dir_of(path, dir, sizeof dir);
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY)) < 0) return -1;
    int rc = fsync(fd);
    e = errno;
    close(fd);
    errno = e;
    return rc;
fail:
    if (!flaw("leave_temp")) unlink(tmp);
    errno = e;
    return -1;
}

void my_recover(const char *path)
{
    if (flaw("no_recover")) return;
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
