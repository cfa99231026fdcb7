/* Reads /proc/self/cmdline: the program learns how it is being run (checked
 * or timed) and could behave differently. */
#include <fcntl.h>
#include <unistd.h>
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    char buf[256];
    int fd = open("/proc/self/cmdline", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, buf, sizeof buf) < 0) buf[0] = 0;
        close(fd);
    }
}
