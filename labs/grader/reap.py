#!/usr/bin/env python3
"""reap.py LEFT_FD SECONDS NPROC CMD...: one run inside a sandbox's own PID namespace.

CMD with a time limit (SIGTERM after SECONDS, SIGKILL 10 s later: exit 124 or
137) and a cap on its processes at once: past NPROC (a fork bomb), every
process of the namespace but its init and this one is killed at once (exit
137). Then the count of every live process left, written on LEFT_FD ("N",
then the largest resident set in MB of a process it waited for, then "bomb"
when the cap was reached), and all of them killed. A run stopped
at its limit has its ranks still ending: 5 s for them first; one that
ended by itself, 2 s for its last processes to end. (Standalone: it
runs inside the sandbox, where only the standard library is needed.)
"""
import os
import signal
import subprocess
import sys
import time


def live():
    n = 0
    for p in os.listdir("/proc"):
        if not p.isdigit() or p == "1" or int(p) == os.getpid():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read()
        except OSError:
            continue
        if st.rsplit(")", 1)[-1].split()[0:1] != ["Z"]:
            n += 1
    return n


def count():
    """The processes of the namespace (a cheap count: the names in /proc)."""
    return sum(1 for p in os.listdir("/proc") if p.isdigit()) - 2


def kill_all():
    """Every process of the namespace but init and this one, until none is left
    (a fork bomb forks while it is being killed)."""
    for _ in range(200):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        if count() <= 0:
            return
        time.sleep(0.005)


def timed_run(seconds, nproc, cmd):
    """(exit status, whether the process cap was reached)."""
    try:
        child = subprocess.Popen(cmd)
    except OSError as e:
        sys.stderr.write("collgrade: cannot run %s: %s\n" % (cmd[0], e.strerror))
        return 127, False
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            rc = child.wait(timeout=0.02)
            return (128 - rc if rc < 0 else rc), False
        except subprocess.TimeoutExpired:
            pass
        if nproc and count() > nproc:
            kill_all()
            child.wait()
            return 137, True
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(timeout=10)
        return 124, False
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        return 137, False


def main():
    fd, seconds, nproc, cmd = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    rc, bomb = timed_run(seconds, nproc, cmd)
    # A run that ended by itself: its last processes (an isolated algorithm's,
    # whose rank has just gone) 2 s to end on their own before they count as
    # left behind; one stopped at its limit: 5 s.
    n, i = live(), 0
    while n > 0 and not bomb and i < (25 if rc in (124, 137) else 10):
        time.sleep(0.2)
        n, i = live(), i + 1
    import resource
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10
    os.write(fd, b"%d %d%s\n" % (n, rss, b" bomb" if bomb else b""))
    os.close(fd)
    if n:
        kill_all()
    sys.exit(rc)


if __name__ == "__main__":
    main()
