/* probe.h — what the isolation cheats share (each includes it once):
 * reading any address without dying of it. */
#include <setjmp.h>
#include <signal.h>
#include <string.h>

/* Reading any address without dying of it: a fault on an unmapped page is
 * caught and the page skipped. */
static sigjmp_buf probe_jb;
static void probe_fault(int sig) { (void)sig; siglongjmp(probe_jb, 1); }

/* 1 when the page holding p can be read (the handler stays installed). */
static int probe_readable(const volatile void *p)
{
    static int armed;
    if (!armed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = probe_fault;
        sa.sa_flags = SA_NODEFER;   /* another fault may come while the first is handled */
        sigaction(SIGSEGV, &sa, NULL);
        sigaction(SIGBUS, &sa, NULL);
        armed = 1;
    }
    if (sigsetjmp(probe_jb, 0)) return 0;
    (void)*(const volatile char *)p;
    return 1;
}
