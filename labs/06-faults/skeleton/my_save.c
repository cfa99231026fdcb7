/*
 * my_save.c — lab 06: a save that never lies. (labs/06-faults/HANDOUT.md)
 *
 *   int  my_save(const char *path, const void *data, size_t n);
 *       replace PATH's contents with the N bytes at DATA, atomically and
 *       durably; 0, or -1 with errno set; on failure PATH is as it was and
 *       no temporary file is left
 *   void my_recover(const char *path);
 *       on start: remove the temporary files (PATH.tmp.*) a killed save left
 *
 * This version is WRONG ON PURPOSE: it overwrites PATH in place. Kill it
 * between its open and its last write and PATH is empty or half written:
 *
 *   make lab06
 *   build/labs/06-faults/lab save --dir /tmp/x --trace --crash-at 2
 *   build/labs/06-faults/lab save --dir /tmp/x --verify
 *
 * Use the POSIX calls themselves (open, write, fsync, rename, close, unlink):
 * the grader watches them. stdio (fopen, fwrite, fclose) is not allowed.
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

/* All N bytes: a write may write fewer than asked (the grader makes the
 * first write to each file short). Keep this loop. */
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

int my_save(const char *path, const void *data, size_t n)
{
    /* TODO 1: write to a temporary file beside PATH instead, named
     *         PATH.tmp.<pid> (snprintf, getpid), opened with
     *         O_WRONLY | O_CREAT | O_EXCL. */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    if (write_all(fd, data, n) != 0) {
        /* TODO 4: on any failure: keep errno, close, unlink the temporary
         *         file, return -1. PATH must be as it was. */
        close(fd);
        return -1;
    }
    /* TODO 2: fsync the file before it gets its name, then close it (check
     *         both: close can report a write error). */
    close(fd);
    /* TODO 3: rename the temporary file over PATH, then open PATH's
     *         directory (O_RDONLY | O_DIRECTORY), fsync it and close it. */
    return 0;
}

void my_recover(const char *path)
{
    /* TODO 5: remove every PATH.tmp.* file in PATH's directory (opendir,
     *         readdir, unlink or unlinkat(dirfd(d), name, 0)). */
    (void)path;
}

CK_REGISTER_SAVER(my_save, my_recover)
