/*
 * my_save.c — lab 06, reference solution: a save that never lies.
 *
 *   1. write the new contents to PATH.tmp.<pid>, a name no one else uses
 *      (O_CREAT|O_EXCL: never someone else's file), every byte (a write may
 *      be short);
 *   2. fsync it: the data is on the disk before any name points to it;
 *   3. close it (close can report a write error too);
 *   4. rename it over PATH: atomic, so PATH names the old file or the new one,
 *      never a mix;
 *   5. fsync the directory: the rename itself is on the disk.
 * Any failure before the rename: close, unlink the temporary file, return -1
 * with the first error's errno. my_recover removes the PATH.tmp.* files a
 * killed save left.
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

/* All N bytes, continuing short writes; -1 with errno on an error. */
static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* PATH's directory, into DIR (at least 2 bytes): "." when PATH has no slash. */
static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash) { snprintf(dir, len, "."); return; }
    if (slash == path) { snprintf(dir, len, "/"); return; }
    snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

static int fsync_dir(const char *path)
{
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd), e = errno;
    if (close(fd) != 0 && rc == 0) { rc = -1; e = errno; }
    errno = e;
    return rc;
}

int my_save(const char *path, const void *data, size_t n)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return -1;   /* nothing was created: nothing to remove */
    int e;
    if (write_all(fd, data, n) != 0 || fsync(fd) != 0) {
        e = errno;
        close(fd);
        goto fail;
    }
    if (close(fd) != 0) { e = errno; goto fail; }
    if (rename(tmp, path) != 0) { e = errno; goto fail; }
    /* From here PATH is the new file; only its name's durability is left. */
    return fsync_dir(path);
fail:
    unlink(tmp);
    errno = e;
    return -1;
}

void my_recover(const char *path)
{
    char dir[PATH_MAX], prefix[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(prefix, sizeof prefix, "%s.tmp.", base);
    DIR *d = opendir(dir);
    if (!d) return;
    size_t np = strlen(prefix);
    struct dirent *ent;
    while ((ent = readdir(d)))
        if (!strncmp(ent->d_name, prefix, np)) unlinkat(dirfd(d), ent->d_name, 0);
    closedir(d);
}

CK_REGISTER_SAVER(my_save, my_recover)
