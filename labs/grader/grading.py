"""One grading: the student's file(s) copied into a fresh work folder, built,
every part of lab.conf graded, the scores put together."""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from . import integrity
from .parts import KINDS
from .sandbox import Sandbox, with_limits, timed_wait, env_mb
from .util import die, clip, fmt1, short_g, read_lines, one_line


class Result:
    def __init__(self, part, score, state, detail):
        self.name, self.max, self.kind = part.name, part.points, part.kind
        if part.kind == "save" and part.opt("mode") == "integrity":
            self.kind = "integrity"   # lab 06's integrity is a save part: it counts as integrity
        self.score, self.state, self.detail = score, state, detail

    def full(self):
        return self.score >= self.max


class Grading:
    def __init__(self, env, conf, lab_dir, files, npmax, tlimit):
        self.env, self.conf, self.lab_dir = env, conf, lab_dir
        self.files, self.npmax, self.tlimit = files, npmax, tlimit
        self.algos = conf.algos()
        self.results, self.partial, self.limits = [], [], []
        self.check_full, self.void_why = True, ""
        self.file_shown = " ".join(files)
        self.verify = env.tool("collverify") if os.access(env.tool("collverify"), os.X_OK) else ""
        self._libsyms, self._voided = None, None

    # ---- what the parts call
    def tool(self, name):
        return self.env.tool(name)

    def add(self, part, score, state, detail):
        self.results.append(Result(part, score, state, detail))

    def left_out(self, why):
        """The grading leaves something the lab grades out (said once)."""
        if why not in self.partial:
            self.partial.append(why)

    def limit_hit(self, why):
        """A run reached a limit of the sandbox (said once, in the reports and the gradebook)."""
        if why not in self.limits:
            self.limits.append(why)

    def student_objs(self):
        """The object files collkit-cc built from the student's file(s)."""
        objs = []
        for src in self.srcs:
            want = os.path.basename(src) + ".o"
            for root, _, names in os.walk(os.path.join(self.work, ".collkit-cc")):
                objs += [os.path.join(root, n) for n in sorted(names) if n == want]
        return objs

    def voided(self):
        """Whether the file's object code already voids the work (worked out once)."""
        if self._voided is None:
            objs = self.student_objs()
            self._voided = bool(objs) and integrity.voids_work(self.integrity_verdict(objs))
        return self._voided

    def integrity_verdict(self, objs):
        libsyms, libown = self._libsyms or (set(), set())
        return integrity.verdict(objs, self.allow, libsyms, libown)

    # ---- the grading, step by step
    def run(self):
        self.work = os.path.realpath(tempfile.mkdtemp(prefix="collgrade.", dir=os.environ.get("TMPDIR") or "/tmp"))
        try:
            self.copy_sources()
            self.box = Sandbox(self.work, self.env.bin, self.tlimit)
            self.env.current_box = self.box
            self.box.left_out = self.left_out
            self.box.limit_hit = self.limit_hit
            self.box.voided = self.voided
            self.seed = self.draw_seed()
            print("collgrade: lab %s%s: %s%s; the checker's inputs from seed %s" % (
                os.path.basename(self.lab_dir), " (%s)" % self.conf.get("title") if self.conf.get("title") else "",
                one_line(self.file_shown), ", algorithm(s) %s" % " ".join(self.algos) if self.algos else "", self.seed),
                flush=True)
            if not self.box.sandboxed:
                print("collgrade: graded " + self.box.how(), flush=True)
            self.allow = integrity.AllowList(self.env.allow_file(self.lab_dir), self.conf.get("allow").split())
            self.build()
            self.grade_parts()
            self.score()
            self.keep_logs()
        finally:
            if getattr(self, "box", None) is not None:
                self.box.interrupt()   # (interrupted: the run in progress and the FIFOs' readers ended)
            self.env.current_box = None
            if self.env.keep:
                sys.stderr.write("collgrade: the work folder is kept: %s\n" % self.work)
            else:
                shutil.rmtree(self.work, ignore_errors=True)

    def copy_sources(self):
        """The student's files under the lab's own names (my_ring.c; lab 05's
        second file my_ring.c too): whatever their original spelling, no path
        the build or a verdict pastes holds a quote, a space or a '$'."""
        os.makedirs(os.path.join(self.work, "src"))
        os.makedirs(os.path.join(self.work, "run"))
        self.srcs = []
        max_mb = env_mb("COLLGRADE_MAX_MB", 256, 1)
        size = sum(os.path.getsize(f) for f in self.files)
        if size > max_mb << 20:
            die("the file(s) to grade hold %d MB, more than %d MB (COLLGRADE_MAX_MB): not graded" % (size >> 20, max_mb))
        for i, w in enumerate(self.conf.files()):
            base = os.path.basename(w)
            if os.path.exists(os.path.join(self.work, "src", base)):
                base = "%d.%s" % (i, base)
            dst = os.path.join(self.work, "src", base)
            try:
                shutil.copyfile(self.files[i], dst)
            except OSError:
                die("cannot copy %s" % one_line(self.files[i]))
            self.srcs.append(dst)
        self.prog = os.path.join(self.work, "lab")
        self.log = os.path.join(self.work, "log")

    def draw_seed(self):
        """The checker's inputs: a seed of this grading's own (COLLGRADE_SEED
        repeats one), so that no table of answers to known inputs passes."""
        seed = os.environ.get("COLLGRADE_SEED")
        if seed is None:
            return str(int.from_bytes(os.urandom(6), "little"))
        if not re.fullmatch(r"[0-9]{1,19}", seed):
            die("COLLGRADE_SEED=%s: expected a whole number" % seed)
        return seed

    def build(self):
        """collkit-cc on the copies (its memory bounded against an #include of
        /dev/zero; in the build's sandbox where bwrap works)."""
        self.built, self.builderr = True, ""
        cmd = self.box.build_box() + [self.tool("collkit-cc")] + self.srcs + ["-o", self.prog]
        with open(self.log + ".build", "wb") as f:
            child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=f, start_new_session=True,
                                     preexec_fn=with_limits({"RLIMIT_AS": 4096 << 20}))
            rc = timed_wait(child, 300)
        foreign = self.foreign_includes()[:3]
        if foreign:
            # Before the compiler's messages: they would show the foreign file's text.
            self.built = False
            self.builderr = "it includes %s: a file may include collkit's headers and the system's, nothing else" % " ".join(foreign)
        elif rc != 0:
            self.built = False
            said = [l for l in read_lines(self.log + ".build") if re.search(r"error|Error:|refused|defines main|collkit-cc:", l)][:3]
            self.builderr = clip("\n".join(said), 400)
            if rc in (124, 137):
                self.builderr = "the compiler did not finish in 300 s" + (": " + self.builderr if self.builderr else "")
        else:
            self._libsyms = integrity.library_symbols(self.prog, self.env.bin)
        self.builderr = self.builderr.replace(os.path.join(self.work, "src") + "/", "")

    def foreign_includes(self):
        """The files the student's sources #include that are not headers (.h)
        of collkit or of the system (the directories the build searches, and
        the compiler's own): another file (the reference solution, a library
        source, /proc, /etc) would be built, or shown in the compiler's
        messages, as the student's work."""
        fm = os.path.join(self.work, ".collkit-cc", "lab", "build", "CMakeFiles", "lab.dir", "flags.make")
        if not os.path.isfile(fm):
            return []   # not even configured: nothing was compiled
        make = {}
        for line in read_lines(fm):
            m = re.match(r"^# compile C with (.*)", line) or re.match(r"^(C_DEFINES|C_INCLUDES|C_FLAGS) = (.*)", line)
            if m:
                make[m.group(1) if m.lastindex == 2 else "cc"] = m.group(m.lastindex)
        cc = make.get("cc", "")
        try:
            flags = shlex.split(" ".join(make.get(k, "") for k in ("C_DEFINES", "C_INCLUDES", "C_FLAGS")))
        except ValueError:
            return ["(the build's flags could not be read)"]
        roots, nxt = [], False
        for w in flags:
            if nxt:
                roots.append(w)
                nxt = False
            elif w in ("-isystem", "-iquote", "-I", "-idirafter"):
                nxt = True
            elif w.startswith("-I"):
                roots.append(w[2:])
        try:
            out = subprocess.run([cc, "-xc", "-E", "-v", "/dev/null"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=60).stdout.decode("utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        m = re.search(r"^#include <\.\.\.> search starts here:\n(.*?)^End of search list", out, re.M | re.S)
        roots += [l[1:] for l in (m.group(1).split("\n") if m else []) if l.startswith(" ")]
        roots = [os.path.realpath(r) for r in roots]
        found = []
        for src in self.srcs:
            for h in self.included(cc, flags, src):
                r = os.path.realpath(h)
                if not any(r.startswith(root + "/") and r.endswith(".h") for root in roots):
                    found.append(h)
        return found

    def included(self, cc, flags, src):
        """Every file SRC includes, as the preprocessor names it (-H)."""
        try:
            child = subprocess.Popen([cc] + flags + ["-E", "-H", src, "-o", "/dev/null"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                     preexec_fn=with_limits({"RLIMIT_AS": 4096 << 20}))
        except OSError:
            return []
        try:
            out, _ = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            out, _ = child.communicate()
        names = {m.group(1) for m in re.finditer(r"^\.+ (.*)$", out.decode("utf-8", "surrogateescape"), re.M)}
        return sorted(names)

    def grade_parts(self):
        for part in self.conf.parts:
            if part.opt("needs") == "gpu" and not self.box.gpu:
                self.add(part, 0.0, "blocked", "needs a GPU; none on this machine")
                self.left_out("part %s needs a GPU (none here)" % part.name)
                continue
            if not self.built:
                self.add(part, 0.0, "failed", "the file does not build: " + self.builderr)
                self.check_full = False
                continue
            KINDS[part.kind](self, part).grade()

    def score(self):
        """Integrity is earned in proportion to the work that passes (the
        check, train and save parts' share of their points); a file that used
        what can do or fake the work earns nothing for that work."""
        work = [r for r in self.results if r.state != "blocked" and r.kind in ("check", "train", "save")]
        work_sc = sum(r.score for r in work)
        work_max = sum(r.max for r in work)
        if self.void_why:
            for r in self.results:
                if r.kind == "integrity" or r.state == "blocked":
                    continue
                if r.score != 0:
                    r.detail = "void (%s / %d as run): the file uses what can do or fake this work (part %s); %s" % (
                        fmt1(r.score), r.max, self.void_why, r.detail)
                r.score = 0.0
        for r in self.results:
            if r.kind != "integrity" or r.score == 0 or work_max == 0:
                continue
            r.score = float(fmt1(r.max * work_sc / work_max))
            if not r.full():
                r.detail += "; earned in proportion to the work that passes (%s of %d points)" % (short_g(work_sc), work_max)
        self.total, self.max = 0.0, 0
        for r in self.results:
            if r.state != "blocked":
                self.total = float(fmt1(self.total + r.score))
                self.max += r.max

    def keep_logs(self):
        """The last grading's program and logs, where the handouts' commands find them."""
        keep = self.env.keepdir(os.path.basename(self.lab_dir))
        try:
            os.makedirs(keep, exist_ok=True)
            shutil.rmtree(os.path.join(keep, "logs"), ignore_errors=True)
            os.makedirs(os.path.join(keep, "logs"))
        except OSError:
            return
        if os.access(self.prog, os.X_OK):
            try:
                shutil.copy2(self.prog, os.path.join(keep, "lab"))
            except OSError:
                pass
        for f in sorted(glob.glob(os.path.join(self.work, "log*")) + glob.glob(os.path.join(self.work, "out", "*"))):
            try:
                if os.path.isfile(f):
                    shutil.copyfile(f, os.path.join(keep, "logs", os.path.basename(f)))
            except OSError:
                pass
