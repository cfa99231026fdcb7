/*
 * stdio_save.c — lab 06: the right recipe, but written with stdio (fopen,
 * fwrite, fclose). Its writes are made inside the C library, where the
 * harness cannot see or stop them: the integrity part forbids it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "collkit_save.h"

static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, len, ".");
    else snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

int my_save(const char *path, const void *data, size_t n)
{
    char tmp[PATH_MAX], dir[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wx");
    if (!f) return -1;
    if (fwrite(data, 1, n, f) != n || fflush(f) != 0 || fsync(fileno(f)) != 0) {
        int e = errno;
        fclose(f);
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) { int e = errno; unlink(tmp); errno = e; return -1; }
    dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
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
