"""The sandbox: every run of the student's program a process tree of its own.

With bubblewrap (bwrap), a sandbox that shows nothing else: the system's
read-only runtime (/usr and its links, the few /etc files a compiler and
Open MPI read, /sys), the kit's tools and libraries read-only, the grading's
program, and that run's own folder; its own PID namespace, no network, its
own /tmp and /dev/shm (size-capped tmpfs). No other checkout, submission,
.git, build tree or reference solution is there to read. Without bwrap (no
user namespaces), its own session, marked in its environment, on the whole
file system: the grader says so on its first line.

Limits, per run and per grading: each file a run writes (COLLGRADE_FSIZE_MB,
1024; the shared-memory transport's heap, a file too, gets half of it); each
process's private memory (COLLGRADE_MEM_MB, 8192, RLIMIT_DATA: shared
segments not counted; none in a sanitizer build or with a GPU); the
processes of a run at once (COLLGRADE_NPROC, 512: above it every one is
killed); the disk a grading's runs fill (COLLGRADE_DISK_MB, 2048: the run
folder watched, the sandbox's /tmp and /dev/shm capped); time (the run's
limit, then its whole PID namespace killed). A limit a run reached is named
in the report. Commands are argument lists only: no shell ever reads a name
the student chose.
"""
import os
import random
import re
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


def env_mb(name, default, least=0):
    return whole_number(name, os.environ.get(name, str(default)), least)


# The system's runtime a sandbox shows, read-only: the programs and libraries,
# and of /etc only what the loader, the compiler (alternatives), name lookup
# and Open MPI read. COLLGRADE_SHOW (folders, ':' between) adds more, where a
# machine keeps its compilers or MPI elsewhere (/opt/...).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_ETC = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "openmpi", "pmix", "prte", "hwloc", "mpi",
              "hosts", "host.conf", "hostname", "nsswitch.conf", "gai.conf", "passwd", "group", "localtime",
              "libibverbs.d", "libnl-3")
# The kit's programs a run or a build starts: nothing else of its bin/ (a
# build tree's bin/ also holds test programs, one of them built from a lab's
# reference solution).
BOX_TOOLS = ("ckrun", "collkit-cc", "collkit-host", "collkit-ref.algo")


def system_view(gpu):
    """bwrap arguments: the system's read-only runtime, /dev, /proc."""
    args = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for e in SYSTEM_ETC:
        if os.path.exists("/etc/" + e):
            args += ["--ro-bind", "/etc/" + e, "/etc/" + e]
    # (the Python that runs reap.py in the box, where it is not the system's)
    pythons = [os.path.realpath(p) for p in (sys.base_prefix, sys.prefix) if not os.path.realpath(p).startswith("/usr")]
    for d in ["/sys"] + ["/opt"] * gpu + pythons + [d for d in os.environ.get("COLLGRADE_SHOW", "").split(":") if d]:
        if os.path.isdir(d):
            args += ["--ro-bind", d, d]
    return args + (["--dev-bind", "/dev", "/dev"] if gpu else ["--dev", "/dev"]) + ["--proc", "/proc"]


def cmake_paths(path, tools):
    """The files and folders a CMake file of the kit names (its libraries, the
    source folders of its headers, CollkitPlugin.cmake and the plugin sources
    beside it): never the build folder or a folder above it."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    found = []
    for token in re.findall(r'/[^\s";()$]+', text.replace(";", " ")):
        p = os.path.realpath(token)
        if not os.path.exists(p) or p.startswith(("/usr/", "/etc/")) or (tools + "/").startswith(p + "/"):
            continue
        found.append(p)
        if os.path.basename(p) == "CollkitPlugin.cmake":
            found.append(os.path.realpath(os.path.join(p, "..", "..", "plugin")))
    return found


def kit_view(bin_dir):
    """bwrap arguments: the kit's tools a grading starts, its libraries,
    headers and CMake files, read-only (a build tree's or a student kit's)."""
    tools = os.path.realpath(os.path.join(bin_dir, ".."))
    paths = [os.path.join(bin_dir, t) for t in BOX_TOOLS]
    paths += [os.path.join(tools, d) for d in ("lib", "include", "cmake", "plugin")]
    for f in ("collkit-plugin-env.cmake", "collkit-targets.cmake"):
        paths.append(os.path.join(tools, f))
        paths += cmake_paths(os.path.join(tools, f), tools)
    args, seen = [], set()
    for p in paths:
        for q in (os.path.abspath(p), os.path.realpath(p)):   # (through a link too: a kit's build/bin)
            if q not in seen and os.path.exists(q):
                seen.add(q)
                args += ["--ro-bind", q, q]
    return args


_sized = []


def box_tmp(size_mb):
    """The sandbox's own /tmp and /dev/shm: tmpfs of SIZE_MB each (a bwrap
    older than 0.7 has no --size: then unsized, the run folder's watch and
    the batch's sized tmpfs still holding)."""
    if not _sized:
        try:
            _sized.append(subprocess.run(["bwrap", "--ro-bind", "/", "/", "--size", "1048576", "--tmpfs", "/tmp", "true"],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         timeout=60).returncode == 0)
        except (OSError, subprocess.TimeoutExpired):
            _sized.append(False)
    size = ["--size", str(size_mb << 20)] if _sized[0] else []
    return size + ["--tmpfs", "/tmp"] + size + ["--tmpfs", "/dev/shm"]


def dir_usage(path, stop):
    """The bytes the files under PATH take on disk; counting stops past STOP."""
    used = 0
    for root, dirs, names in os.walk(path):
        for n in names:
            try:
                used += os.lstat(os.path.join(root, n)).st_blocks * 512
            except OSError:
                pass
            if used > stop:
                return used
    return used


def max_rss_mb():
    """The largest resident set of any process this one has waited for (MB)."""
    import resource
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10


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
    """How the runs of one grading are made: limits, namespaces, what they see.
    A copy (split()) makes runs of its own beside the others': the limits,
    the view and the interruption are shared, each run's outcome its own."""

    def __init__(self, work, bin_dir, tlimit):
        self.work, self.bin_dir, self.tlimit = work, bin_dir, tlimit
        self.fsize_mb = env_mb("COLLGRADE_FSIZE_MB", 1024, 1)
        self.mem_mb = env_mb("COLLGRADE_MEM_MB", 8192)
        self.nproc = env_mb("COLLGRADE_NPROC", 512, 8)
        self.disk_mb = env_mb("COLLGRADE_DISK_MB", 2048, 64)
        self.gpu = have_gpu()
        if sanitized_build(bin_dir) or self.gpu:
            self.mem_mb = 0
        # From its first collective on, no process of a run starts another
        # process or program (plugin/confine.c: seccomp). COLLGRADE_CONFINE=0 leaves that out.
        self.confine = 0 if os.environ.get("COLLGRADE_CONFINE", "1") == "0" else 1
        self.sandboxed = sandbox_ok()
        if not self.sandboxed and os.environ.get("COLLGRADE_SANDBOX") == "require":
            die("COLLGRADE_SANDBOX=require, and bwrap cannot make a sandbox here")
        # (/tmp's tmpfs before the binds: a kit or a grader under /tmp stays seen)
        self.view = system_view(self.gpu) + box_tmp(self.disk_mb) + kit_view(bin_dir) + ["--ro-bind", HERE, HERE]
        self.left, self.overflow, self.cut, self.running = 0, "", "", None
        self.shared = {"collectors": [], "running": set()}
        self.fifos = []
        self.tok = "%d.%d" % (os.getpid(), random.getrandbits(40))
        self.left_out = lambda why: None   # what the grading is told when a run is cut short
        self.limit_hit = lambda why: None  # ... and when a run reached a limit
        self.voided = lambda: False         # whether the file's object code already voids the work

    def split(self):
        """A sandbox for runs beside this one's (the same limits and view)."""
        import copy
        twin = copy.copy(self)
        twin.left, twin.overflow, twin.cut, twin.running, twin.fifos = 0, "", "", None, []
        twin.tok = "%d.%d" % (os.getpid(), random.getrandbits(40))
        return twin

    def how(self):
        """What the grading's first lines say of its sandbox."""
        if self.sandboxed:
            return "in a bubblewrap sandbox that shows the system, the kit's tools and its own files only"
        return ("WITHOUT a sandbox (bwrap is missing or cannot make namespaces here): its runs see the whole file "
                "system, and their processes and disk are not capped")

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
        rss, self.cut, self.rss = max_rss_mb(), "", 0
        with open(out, "wb") as log:
            if self.sandboxed:
                rc = self._boxed(seconds, log, cmd, env, level, iso)
            else:
                rc = self._session(seconds, log, cmd, env)
        self.collected()
        self.overflow = self.cut   # (a limit that stopped the run: its verdict)
        try:
            if os.path.getsize(out) >= self.fsize_mb << 20:
                self.overflow = ("the program's output reached %d MB (COLLGRADE_FSIZE_MB) and was cut there: it prints without end"
                                 % self.fsize_mb)
                self.limit_hit("output: a run printed %d MB (COLLGRADE_FSIZE_MB)" % self.fsize_mb)
        except OSError:
            pass
        if not self.sandboxed:
            self.rss = max_rss_mb() if max_rss_mb() > rss else 0
        if self.mem_mb and self.rss * 2 >= self.mem_mb:   # (a program that has half of its limit has gone for all of it)
            self.limit_hit("memory: a process of a run held %d MB, against a limit of %d MB a process (COLLGRADE_MEM_MB)"
                           % (self.rss, self.mem_mb))
        # A run stopped by a --time-limit below every default limit (90 s + 10 s
        # a rank) might have finished under the lab's own: the grade is partial.
        if rc in (124, 137) and not self.cut and self.tlimit and self.tlimit < 90:
            self.left_out("a run was stopped at --time-limit %d s, below the default limit" % self.tlimit)
        return rc

    def _boxed(self, seconds, log, cmd, env, level, iso):
        """The run in its sandbox, under reap.py: its time limit, the count of
        its processes at once, what it left."""
        run = os.path.join(self.work, "run")
        rfd, wfd = os.pipe()
        # The program, its build (the isolated .algo) and the cost model's
        # fixed parameters, read-only; nothing else of the work folder (the
        # sources, the logs, a training part's reference checkpoint).
        shown = [os.path.join(self.work, f) for f in ("lab", ".collkit-cc", "log.params")]
        box = (["bwrap"] + self.view + [a for f in shown if os.path.exists(f) for a in ("--ro-bind", f, f)]
               + ["--bind", run, run, "--chdir", run, "--setenv", "TMPDIR", "/tmp", "--setenv", "HOME", "/tmp",
                  "--setenv", "COLLKIT_CONFINE", str(level), "--setenv", "COLLKIT_ISOLATE", str(iso),
                  "--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--new-session",
                  sys.executable, os.path.join(HERE, "reap.py"), str(wfd), str(seconds), str(self.nproc)] + list(cmd))
        try:
            child = subprocess.Popen(box, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, pass_fds=(wfd,),
                                     start_new_session=True, preexec_fn=with_limits(self.run_limits()))
        finally:
            os.close(wfd)
        rc = self.watched(child, seconds + 30)
        with os.fdopen(rfd, "rb") as f:
            said = f.read(64).decode("ascii", "replace").split()
        self.left = int(said[0]) if said and said[0].isdigit() else 0
        self.rss = int(said[1]) if said[1:2] and said[1].isdigit() else 0
        if said[2:3] == ["bomb"]:
            self.cut = ("the run started more than %d processes at once (COLLGRADE_NPROC): all were killed (a fork bomb?)"
                        % self.nproc)
            self.limit_hit("processes: a run started more than %d at once (COLLGRADE_NPROC); all were killed" % self.nproc)
        return rc

    def _session(self, seconds, log, cmd, env):
        env["COLLGRADE_RUN"] = self.tok
        child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                 start_new_session=True, preexec_fn=with_limits(self.run_limits()))
        rc = self.watched(child, seconds)
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

    def watched(self, child, seconds):
        """timed_wait with the run folder's disk watched: a run whose files
        pass COLLGRADE_DISK_MB is killed there, and what it wrote removed."""
        run = os.path.join(self.work, "run")
        cap = self.disk_mb << 20
        self.running = child
        self.shared["running"].add(child)
        try:
            end = time.monotonic() + seconds
            while True:
                try:
                    rc = child.wait(timeout=min(0.25, max(end - time.monotonic(), 0.01)))
                    return 128 - rc if rc < 0 else rc
                except subprocess.TimeoutExpired:
                    pass
                if time.monotonic() >= end:
                    return timed_wait(child, 0.01)
                if dir_usage(run, cap) > cap:
                    kill_group(child.pid, signal.SIGKILL)
                    child.wait()
                    self.cut = ("the run's files passed %d MB on disk (COLLGRADE_DISK_MB): it was stopped there, and they were removed"
                                % self.disk_mb)
                    self.limit_hit("disk: a run wrote more than %d MB (COLLGRADE_DISK_MB); it was stopped there" % self.disk_mb)
                    self.emptied(run)
                    return 137
        finally:
            self.shared["running"].discard(child)
            self.running = None

    def emptied(self, run):
        """The files a run wrote past the disk limit removed (its FIFOs kept)."""
        for name in os.listdir(run):
            p = os.path.join(run, name)
            try:   # (what is gone already, the namespace's last processes ending, is gone)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                elif not stat.S_ISFIFO(os.lstat(p).st_mode):
                    os.unlink(p)
            except OSError:
                pass

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
        """Every run in progress (its whole group) and the FIFOs' readers ended."""
        for child in list(self.shared["running"]):
            kill_group(child.pid, signal.SIGTERM)
        self.shared["running"].clear()
        for c in self.shared["collectors"]:
            c.kill()
            c.wait()
        self.shared["collectors"].clear()

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
            c = subprocess.Popen(["head", "-c", str(self.fsize_mb << 20), "--", fifo], stdin=subprocess.DEVNULL, stdout=f)
        self.fifos.append((fifo, c))
        self.shared["collectors"].append(c)
        return copy

    def collected(self):
        """After a run, every copy is whole: a FIFO the run never opened is
        opened and closed here, so that its reader ends too."""
        for fifo, c in self.fifos:
            try:
                if stat.S_ISFIFO(os.lstat(fifo).st_mode):
                    os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
                    os.unlink(fifo)
            except OSError:
                pass
            c.wait()
            if c in self.shared["collectors"]:
                self.shared["collectors"].remove(c)
        self.fifos = []

    def build_box(self):
        """The build's sandbox: the system, the kit and the work folder only;
        what the file includes or embeds cannot be another file of this
        machine, nor anything on the network."""
        if not self.sandboxed:
            return []
        return (["bwrap"] + self.view + ["--bind", self.work, self.work, "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp",
                                         "--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session"])
