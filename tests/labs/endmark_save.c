/*
 * endmark_save.c — lab 06: a save that makes the harness's own end mark
 * (the ioctl on descriptor -7 that closes the saver's call, plugin/save.c)
 * first, so that none of its calls would be counted, crashed or failed, then
 * overwrites state.bin in place. When the mark was taken from anywhere it
 * counted 0 calls and scored 75.0 (crash, faults and durability in full);
 * an end mark counts only from the start mark's frame, so its calls are
 * counted and it loses what the skeleton loses (labs.save_cli).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "collkit_save.h"
int my_save(const char *path, const void *data, size_t n)
{
    ioctl(-7, 0x434b5302, 0);   /* MARK_FD, MARK_END */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    const char *p = data;
    while (n) { ssize_t w = write(fd, p, n); if (w < 0) { close(fd); return -1; } p += w; n -= (size_t)w; }
    close(fd);
    return 0;
}
void my_recover(const char *path) { (void)path; }
CK_REGISTER_SAVER(my_save, my_recover)
