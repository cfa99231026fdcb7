/*
 * hidden_save.c — lab 06: the reference recipe with its writes made where
 * the crash harness cannot follow them; the harness refuses the call
 * (ENOSYS) and names it, and the save fails every part. GRADE_TEST_SAVE:
 *   mmap     the temporary file written through a shared mapping
 *   fork     the whole save made by a child process
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "collkit_save.h"

static int variant(const char *name)
{
    const char *v = getenv("GRADE_TEST_SAVE");
    return v && !strcmp(v, name);
}

static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, len, ".");
    else snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* The recipe (temporary file, fsync, rename, the directory's fsync), its
 * body written through a shared mapping when MAPPED. */
static int save_recipe(const char *path, const void *data, size_t n, int mapped)
{
    char tmp[PATH_MAX], dir[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0644), e;
    if (fd < 0) return -1;
    if (mapped && n > 0) {
        void *m = MAP_FAILED;
        if (ftruncate(fd, (off_t)n) == 0) m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) goto fail;
        memcpy(m, data, n);
        munmap(m, n);
    } else {
        for (size_t done = 0; done < n;) {
            ssize_t w = write(fd, (const char *)data + done, n - done);
            if (w < 0) goto fail;
            done += (size_t)w;
        }
    }
    if (fsync(fd) != 0) goto fail;
    if (close(fd) != 0 || rename(tmp, path) != 0) { e = errno; unlink(tmp); errno = e; return -1; }
    dir_of(path, dir, sizeof dir);
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY)) < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
fail:
    e = errno;
    close(fd);
    unlink(tmp);
    errno = e;
    return -1;
}

int my_save(const char *path, const void *data, size_t n)
{
    if (variant("fork")) {
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) _exit(save_recipe(path, data, n, 0) == 0 ? 0 : 1);
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) { errno = EIO; return -1; }
        return 0;
    }
    return save_recipe(path, data, n, variant("mmap"));
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
