"""The sandbox: every run of the student's program a process tree of its own.

With bubblewrap (bwrap), a sandbox: its own PID namespace, no network, its
own /tmp and /dev/shm, the whole system read-only but for that run's output
folder, the reference solutions, instructor notes, library algorithm
sources, tests and slides hidden; without, its own session, marked in its
environment. When the run ends, what it left running is counted and killed:
a process that outlives its run is named for it, never taken for slowness.
Every run is limited in the size of each file it writes (COLLGRADE_FSIZE_MB,
1024; the shared-memory transport's heap, a file too, gets half of it) and in
each process's private memory (COLLGRADE_MEM_MB, 8192, RLIMIT_DATA: shared
segments not counted; none in a sanitizer build or with a GPU). Commands are
argument lists only: no shell ever reads a name the student chose.
"""
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time

from .util import die

HERE = os.path.dirname(os.path.abspath(__file__))


def have_gpu():
    if not shutil.which("nvidia-smi"):
        return False
    try:
        out = subprocess.run(["nvidia-smi", "-L"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"GPU" in out


def sandbox_ok():
    """bwrap installed and allowed to make namespaces here (COLLGRADE_SANDBOX=none
    turns it off for single gradings)."""
    if os.environ.get("COLLGRADE_SANDBOX") == "none" or not shutil.which("bwrap"):
        return False
    try:
        return subprocess.run(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
                               "--unshare-net", "--die-with-parent", "true"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def sanitized_build(bin_dir):
    """A sanitizer build reserves terabytes of address space: no memory limit there."""
    try:
        with open(os.path.join(bin_dir, "..", "collkit-plugin-env.cmake")) as f:
            return any(line.startswith('set(_collkit_sanitize "-f') for line in f)
    except OSError:
        return False


def whole_number(name, value, least=0):
    if not value.isdigit() or int(value) < least:
        die("%s: whole numbers (%s=%s)" % (name, name, value))
    return int(value)


def under_tmp(path):
    return path == "/tmp" or path.startswith("/tmp/")


def with_limits(limits):
    """A function that sets LIMITS (resource name: bytes) in a child before its exec."""
    import resource

    def apply():
        for name, value in limits.items():
            lim = getattr(resource, name, None)
            if lim is not None:
                resource.setrlimit(lim, (value, value))
    return apply if limits else None


def timed_wait(child, seconds):
    """CHILD's exit status, or 124/137 when it ran past SECONDS (SIGTERM to its
    group, then SIGKILL 10 s later)."""
    try:
        rc = child.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        kill_group(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=10)
            return 124
        except subprocess.TimeoutExpired:
            kill_group(child.pid, signal.SIGKILL)
            child.wait()
            return 137
    return 128 - rc if rc < 0 else rc


def kill_group(pid, sig):
    try:
        os.killpg(pid, sig)
    except OSError:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


class Sandbox:
    """How the runs of one grading are made: limits, namespaces, hidden folders."""

    def __init__(self, work, bin_dir, lab_dir, labs, keeproot, tlimit):
        self.work, self.bin_dir, self.tlimit = work, bin_dir, tlimit
        self.fsize_mb = whole_number("COLLGRADE_FSIZE_MB", os.environ.get("COLLGRADE_FSIZE_MB", "1024"), 1)
        self.mem_mb = whole_number("COLLGRADE_MEM_MB", os.environ.get("COLLGRADE_MEM_MB", "8192"))
        self.gpu = have_gpu()
        if sanitized_build(bin_dir) or self.gpu:
            self.mem_mb = 0
        # From its first collective on, no process of a run starts another
        # process or program (plugin/confine.c: seccomp). COLLGRADE_CONFINE=0 leaves that out.
        self.confine = 0 if os.environ.get("COLLGRADE_CONFINE", "1") == "0" else 1
        self.sandboxed = sandbox_ok()
        if not self.sandboxed and os.environ.get("COLLGRADE_SANDBOX") == "require":
            die("COLLGRADE_SANDBOX=require, and bwrap cannot make a sandbox here")
        self.devs = ["--dev-bind", "/dev", "/dev"] if self.gpu else ["--dev", "/dev"]
        tools = os.path.realpath(os.path.join(bin_dir, ".."))
        self.ro_binds = []
        for p in (work, tools, lab_dir, HERE):
            if under_tmp(p):   # under the sandbox's own /tmp
                self.ro_binds += ["--ro-bind", p, p]
        self.hides = hidden_folders(labs, keeproot, [os.path.realpath(lab_dir), work, tools, HERE])
        self.left, self.overflow, self.running = 0, "", None
        self.collectors = []
        self.tok = "%d.%d" % (os.getpid(), random.getrandbits(40))
        self.left_out = lambda why: None   # what the grading is told when a run is cut short
        self.voided = lambda: False         # whether the file's object code already voids the work

    # ---- the limits of a run: each file it writes, each process's memory
    def run_limits(self):
        lim = {"RLIMIT_FSIZE": self.fsize_mb << 20}
        if self.mem_mb:
            lim["RLIMIT_DATA"] = self.mem_mb << 20
        return lim

    def run_env(self, level, iso, extra):
        env = dict(os.environ)
        env.update(extra)
        env["COLLKIT_SHM_HEAP"] = "%dM" % max(self.fsize_mb // 2, 1)
        env["COLLKIT_CONFINE"] = str(level)
        env["COLLKIT_ISOLATE"] = str(iso)
        return env

    def isolate(self, cmd):
        """[isolation] The graded code alone in its own process: in the
        checker's and the benchmark's runs, the file's algorithms (and the
        library reference timed beside them) run in a confined process of
        their own that holds nothing else; the rank process carries their
        messages. Training, the save harness, device buffers and the
        shared-memory transport (lab 05) stay in process; COLLGRADE_ISOLATE=0
        leaves it out. A file whose object code already voids the work earns
        nothing either way: it runs in process, where its report shows what it
        did as run."""
        if os.environ.get("COLLGRADE_ISOLATE", "1") == "0":
            return 0
        if any(a in ("train", "save", "shm", "--transport=shm", "--device") or a.startswith("--device=") for a in cmd):
            return 0
        return 0 if self.voided() else 1

    def confine_level(self, cmd):
        """Confined runs of the checker and the benchmark on host buffers start
        no thread, timer or executable memory either (COLLKIT_CONFINE=2: none of
        theirs is made after MPI's start); the trainer's (its async engine) and
        a device's may."""
        if self.confine == 0:
            return 0
        if any(a in ("train", "--device") or a.startswith("--device=") for a in cmd):
            return 1
        return 2

    def limited(self, seconds, out, cmd, env=None):
        """One run of the student's program: CMD with no input, its output in
        OUT, stopped after SECONDS (then 10 s more before it is killed). Its
        exit status (124 or 137: timed out); self.left: the processes it left."""
        level, iso = self.confine_level(cmd), self.isolate(cmd)
        env = self.run_env(level, iso, env or {})
        with open(out, "wb") as log:
            if self.sandboxed:
                rc = self._boxed(seconds, log, cmd, env, level, iso)
            else:
                rc = self._session(seconds, log, cmd, env)
        self.collected()
        self.overflow = ""
        try:
            if os.path.getsize(out) >= self.fsize_mb << 20:
                self.overflow = ("the program's output reached %d MB (COLLGRADE_FSIZE_MB) and was cut there: it prints without end"
                                 % self.fsize_mb)
        except OSError:
            pass
        # A run stopped by a --time-limit below every default limit (90 s + 10 s
        # a rank) might have finished under the lab's own: the grade is partial.
        if rc in (124, 137) and self.tlimit and self.tlimit < 90:
            self.left_out("a run was stopped at --time-limit %d s, below the default limit" % self.tlimit)
        return rc

    def _boxed(self, seconds, log, cmd, env, level, iso):
        run = os.path.join(self.work, "run")
        rfd, wfd = os.pipe()
        box = (["bwrap", "--ro-bind", "/", "/"] + self.devs + ["--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
               + self.ro_binds + ["--ro-bind", self.work, self.work, "--bind", run, run] + self.hides
               + ["--chdir", run, "--setenv", "TMPDIR", "/tmp", "--setenv", "COLLKIT_CONFINE", str(level),
                  "--setenv", "COLLKIT_ISOLATE", str(iso),
                  "--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--new-session",
                  sys.executable, os.path.join(HERE, "reap.py"), str(wfd), str(seconds)] + list(cmd))
        try:
            child = subprocess.Popen(box, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, pass_fds=(wfd,),
                                     start_new_session=True, preexec_fn=with_limits(self.run_limits()))
        finally:
            os.close(wfd)
        self.running = child
        rc = timed_wait(child, seconds + 30)
        self.running = None
        with os.fdopen(rfd, "rb") as f:
            text = f.read(64).decode("ascii", "replace").strip()
        self.left = int(text) if text.isdigit() else 0
        return rc

    def _session(self, seconds, log, cmd, env):
        env["COLLGRADE_RUN"] = self.tok
        child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                 start_new_session=True, preexec_fn=with_limits(self.run_limits()))
        self.running = child
        rc = timed_wait(child, seconds)
        self.running = None
        # The marked processes still there; a run stopped at its limit: 5 s for its ranks to end.
        for _ in range(25):
            if rc not in (124, 137) or not self.marked():
                break
            time.sleep(0.2)
        n = 0
        for p in self.marked():
            try:
                os.kill(p, signal.SIGKILL)
                n += 1
            except OSError:
                pass
        self.left = n
        return rc

    def marked(self):
        mark = ("COLLGRADE_RUN=" + self.tok).encode()
        pids = []
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % p, "rb") as f:
                    if mark in f.read().split(b"\0"):
                        pids.append(int(p))
            except OSError:
                continue
        return pids

    def interrupt(self):
        """The run in progress (its whole group) and the FIFOs' readers ended."""
        if self.running is not None:
            kill_group(self.running.pid, signal.SIGTERM)
            self.running = None
        for c in self.collectors:
            c.kill()
            c.wait()
        self.collectors = []

    # ---- What a run writes for the verdict leaves its reach as it is written.
    # The program writes the files the verdict reads (collverify's results, the
    # cost model's CSV) in its own process, where the student's code runs too:
    # a file there could be rewritten by it at exit. So each is a FIFO in the
    # run's folder, read as it is written by a reader outside the run (head,
    # bounded by COLLGRADE_FSIZE_MB) into a file under work/out, which no run
    # can write: the program can only add to what is sent, never change it.
    def collect(self, name):
        fifo = os.path.join(self.work, "run", name)
        copy = os.path.join(self.work, "out", name)
        os.makedirs(os.path.join(self.work, "out"), exist_ok=True)
        for p in (fifo, copy):
            if os.path.lexists(p):
                os.unlink(p)
        try:
            os.mkfifo(fifo, 0o600)
        except OSError as e:
            die("cannot make the FIFO %s: %s" % (fifo, e.strerror))
        with open(copy, "wb") as f:
            self.collectors.append(subprocess.Popen(["head", "-c", str(self.fsize_mb << 20), "--", fifo],
                                                    stdin=subprocess.DEVNULL, stdout=f))
        return copy

    def collected(self):
        """After a run, every copy is whole: a FIFO the run never opened is
        opened and closed here, so that its reader ends too."""
        if not self.collectors:
            return
        run = os.path.join(self.work, "run")
        for name in os.listdir(run):
            path = os.path.join(run, name)
            try:
                if stat.S_ISFIFO(os.lstat(path).st_mode):
                    os.close(os.open(path, os.O_RDWR | os.O_NONBLOCK))
                    os.unlink(path)
            except OSError:
                pass
        for c in self.collectors:
            c.wait()
        self.collectors = []

    def build_box(self):
        """The build's sandbox: what the file includes or embeds cannot be a
        hidden folder's file, nor anything on the network."""
        if not self.sandboxed:
            return []
        return (["bwrap", "--ro-bind", "/", "/"] + self.devs + ["--proc", "/proc", "--bind", self.work, self.work]
                + self.hides + ["--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session"])


def hidden_folders(labs, keeproot, keep):
    """What a student's file must never read, at build or run time (an .incbin,
    #embed or fopen of it, its text then printed into a verdict): the reference
    solutions and instructor notes of every lab, the library's own algorithms,
    the tests, the slides' sources, and the programs and logs earlier gradings
    left in build/labs. bwrap arguments that show them empty (a folder that
    holds the lab, this grading's work folder or the tools stays)."""
    if not labs:
        return []
    root = os.path.realpath(os.path.join(labs, ".."))
    cands = []
    for lab in sorted(os.listdir(labs)):
        cands += [os.path.join(labs, lab, "solution"), os.path.join(labs, lab, "instructor")]
    cands += [os.path.join(root, "collectives", "algos"), os.path.join(root, "tests"), os.path.join(root, "slides"), keeproot]
    hides = []
    for h in cands:
        if not os.path.isdir(h):
            continue
        h = os.path.realpath(h)
        if any((p + "/").startswith(h + "/") for p in keep):
            continue
        hides += ["--tmpfs", h]
    return hides
