#!/usr/bin/env python3
"""reap.py LEFT_FD SECONDS CMD...: one run inside a sandbox's own PID namespace.

CMD with a time limit (SIGTERM after SECONDS, SIGKILL 10 s later: exit 124 or
137), then the count of every live process left in the namespace but its
init and this one, written on LEFT_FD, then all of them killed. A run stopped
at its limit has its ranks still ending: 5 s for them first. (Standalone: it
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


def timed_run(seconds, cmd):
    try:
        child = subprocess.Popen(cmd)
    except OSError as e:
        sys.stderr.write("collgrade: cannot run %s: %s\n" % (cmd[0], e.strerror))
        return 127
    try:
        rc = child.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=10)
            return 124
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            return 137
    return 128 - rc if rc < 0 else rc


def main():
    fd, seconds, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    rc = timed_run(seconds, cmd)
    n, i = live(), 0
    while n > 0 and rc in (124, 137) and i < 25:
        time.sleep(0.2)
        n, i = live(), i + 1
    os.write(fd, b"%d\n" % n)
    os.close(fd)
    if n:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    sys.exit(rc)


if __name__ == "__main__":
    main()
