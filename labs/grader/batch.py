"""--batch DIR: every submission graded by a collgrade of its own, in a
sandbox of its own; the instructor's files and the other submissions are out
of its reach (read-only, or not there at all). A canary first: the lab's
reference solution, graded the same way, must get full marks, or nothing is
graded. No grade can be lost to a folder's name: every name is read as the
bytes it is, each has an ID no other name has, and what a name or a program
printed reaches the terminal and the gradebook only as text."""
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from .sandbox import sandbox_ok, sanitized_build, env_mb, with_limits, timed_wait, have_gpu, system_view, kit_view, box_tmp, HERE
from .util import die, say, one_line, clip, fmt1, read_text


def student_id(name):
    """The folder's name when it is made of a-z 0-9 . _ - only (and starts
    with a letter, a digit or '_'); else that name made safe, '+' and a hash
    of every byte of it. A plain ID has no '+', a hashed one always has: no
    two folders share an ID, on a file system that ignores case too."""
    if re.fullmatch(r"[a-z0-9_][a-z0-9._-]{0,99}", name):
        return name
    raw = os.fsencode(name)
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", raw.decode("ascii", "replace"))[:48]
    safe = re.sub(r"^[-.]", "_", safe) or "_"
    return "%s+%s" % (safe, hashlib.sha256(raw).hexdigest()[:32])


def csv_cell(text):
    """A gradebook cell: quoted, its control characters as escapes, and one
    that a spreadsheet would take for a formula (= + - @) prefixed with '."""
    t = one_line(text)
    if t[:1] in ("=", "+", "-", "@"):
        t = "'" + t
    return '"%s"' % t.replace('"', '""')


def tree_size(path, max_files):
    """(files, bytes) under PATH, links not followed; counting stops past MAX_FILES."""
    files, size = 0, 0
    for root, dirs, names in os.walk(path):
        for n in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            files += 1
            try:
                size += os.lstat(os.path.join(root, n)).st_size
            except OSError:
                pass
            if files > max_files:
                return files, size
    return files, size


def remove_links(path):
    for root, dirs, names in os.walk(path):
        for n in names + dirs:
            p = os.path.join(root, n)
            if os.path.islink(p):
                os.unlink(p)


class Batch:
    def __init__(self, env, a, conf, lab_dir, self_path):
        self.env, self.a, self.conf, self.lab_dir, self.self_path = env, a, conf, lab_dir, self_path
        self.labname = os.path.basename(lab_dir)
        self.labmax = sum(p.points for p in conf.parts)

    def run(self):
        self.prepare()
        canary = self.canary_folder()
        say("collgrade: batch of lab %s: %d submission(s) in %s; results in %s" % (self.labname, len(self.subs), self.src, self.out))
        if canary:
            self.canary(canary)
        for n, sub in enumerate(self.subs, 1):
            sid = student_id(sub)
            if os.path.isfile(os.path.join(self.out, "students", sid + ".json")) and not self.a["regrade"]:
                say("collgrade: [%d/%d] %s: already graded (--regrade grades it again)" % (n, len(self.subs), one_line(sub)))
                continue
            t0 = time.time()
            total, mx, partial, note = self.grade(os.path.join(self.src, sub), sub, os.path.join(self.out, "students"), sid)
            say("collgrade: [%d/%d] %s: %s / %d%s in %d s" % (n, len(self.subs), one_line(sub), total, mx,
                " (partial%s)" % (": " + note if note else "") if partial else " (%s)" % note if note else "", time.time() - t0))
        self.gradebook()
        return 0

    def prepare(self):
        a = self.a
        if not os.path.isdir(a["batch"]):
            die("--batch %s: not a folder" % a["batch"])
        if not sandbox_ok():
            die("--batch grades every submission in a bubblewrap sandbox, and bwrap is not installed or cannot make "
                "namespaces here (Debian: apt-get install bubblewrap; scripts/deps.sh)")
        self.src = os.path.realpath(a["batch"])
        out = a["bout"] or self.src + ".grades"
        try:
            os.makedirs(os.path.join(out, "students"), exist_ok=True)
            os.makedirs(os.path.join(out, "gradescope"), exist_ok=True)
        except OSError:
            die("cannot create %s" % out)
        self.out = os.path.realpath(out)
        if (self.out + "/").startswith(self.src + "/"):
            die("--out %s is inside the submissions' folder %s" % (self.out, self.src))
        self.subs = sorted((e.name for e in os.scandir(self.src) if e.is_dir(follow_symlinks=False)), key=os.fsencode)
        if not self.subs:
            die("--batch %s: no submission folders in it" % self.src)
        self.limits()

    def limits(self):
        """Each grading's limits, set before its submission is copied: its time
        (COLLGRADE_BATCH_LIMIT), its files and bytes (COLLGRADE_MAX_FILES,
        COLLGRADE_MAX_MB), its disk (COLLGRADE_DISK_MB: a tmpfs /tmp of that
        size and 512 MB more for the build), each process's memory
        (COLLGRADE_MEM_MB, RLIMIT_DATA), the user's processes
        (COLLGRADE_BATCH_NPROC, RLIMIT_NPROC: not enforced for root, where the
        runs' own cap, COLLGRADE_NPROC, holds)."""
        per = self.a["tlimit"]
        self.whole = env_mb("COLLGRADE_BATCH_LIMIT", 30 * per if per else 3600, 1)
        mem = env_mb("COLLGRADE_MEM_MB", 8192)
        nproc = env_mb("COLLGRADE_BATCH_NPROC", 2048)
        # A submission over this many files or bytes is refused before it is copied.
        self.max_files = env_mb("COLLGRADE_MAX_FILES", 2000, 1)
        self.max_mb = env_mb("COLLGRADE_MAX_MB", 256, 1)
        disk = env_mb("COLLGRADE_DISK_MB", 2048, 64)
        if sanitized_build(self.env.bin):
            mem = 0
        self.rlimits = {"RLIMIT_NPROC": nproc}
        if mem:
            self.rlimits["RLIMIT_DATA"] = mem << 20
        # What a grading sees: the system, the kit, the grader and the lab,
        # read-only; its own /tmp (the copy, the work folder); no other
        # submission, no grades, no other checkout.
        gpu = have_gpu()
        shows = [self.env.here, HERE, self.lab_dir, self.env.allow_file(self.lab_dir)]
        shows += [os.path.join(self.env.bin, t) for t in ("collgrade", "collverify", "tagsynth", "ckptdiff", "grader")]
        self.binds = system_view(gpu) + box_tmp(disk + 512) + kit_view(self.env.bin)
        for w in shows:
            if os.path.exists(w):
                self.binds += ["--ro-bind", w, w]
        self.binds += ["--setenv", "COLLGRADE_ALLOW", os.path.realpath(self.env.allow_file(self.lab_dir))]

    # ---- the canary: the reference solution, graded as a submission
    def canary_folder(self):
        if self.a["canary"]:
            if not os.path.isdir(self.a["canary"]):
                die("--canary %s: not a folder" % self.a["canary"])
            return os.path.realpath(self.a["canary"])
        if self.a["no_canary"]:
            return ""
        files = []
        for w in self.conf.files():
            for c in (os.path.join(self.lab_dir, "solution", os.path.basename(w)),
                      os.path.join(self.lab_dir, os.path.dirname(w), "solution", os.path.basename(w))):
                if os.path.isfile(c):
                    files.append(c)
                    break
            else:
                die("--batch grades the lab's reference solution first, and %s has no solution/%s: name a folder that "
                    "must get full marks with --canary DIR (or leave the check out with --no-canary)"
                    % (self.lab_dir, os.path.basename(w)))
        d = tempfile.mkdtemp(prefix="collgrade-canary.", dir=os.environ.get("TMPDIR") or "/tmp")
        for f in files:
            shutil.copyfile(f, os.path.join(d, os.path.basename(f)))
        self.canary_tmp = d
        return d

    def canary(self, folder):
        say("collgrade: the canary first: the reference solution (%s)" % folder)
        where = os.path.join(self.out, "canary")
        os.makedirs(where, exist_ok=True)
        try:
            total, mx, partial, note = self.grade(folder, "reference", where, "reference")
        finally:
            if getattr(self, "canary_tmp", ""):
                shutil.rmtree(self.canary_tmp, ignore_errors=True)
        wrong = self.canary_wrong(os.path.join(where, "reference.json"))
        if note or wrong:
            raise_stop("collgrade: the canary, the lab's reference solution, scored %s / %d%s: %s. The grader cannot grade "
                       "this lab here (its report: %s); no submission was graded"
                       % (total, mx, " (partial)" if partial else "", note or wrong, os.path.join(where, "reference.txt")))
        say("collgrade: the canary: %s / %d" % (total, mx))

    def canary_wrong(self, path):
        """What keeps the canary's report from full marks (the speed parts,
        which move with the machine, need only be measured)."""
        try:
            with open(path, encoding="utf-8") as f:
                r = json.load(f)
        except (OSError, ValueError):
            return "no report"
        kinds = {p.name: p.kind for p in self.conf.parts}
        for p in r.get("parts", []):
            if p["status"] == "blocked":
                continue
            if kinds.get(p["name"]) == "paired":
                if p["status"] != "graded" or p["detail"].startswith("not measured"):
                    return "part %s: %s" % (p["name"], clip(p["detail"], 300))
            elif p["score"] < p["max"]:
                return "part %s: %s / %s: %s" % (p["name"], fmt1(p["score"]), p["max"], clip(p["detail"], 300))
        return "" if r.get("parts") else "no part graded"

    # ---- one submission
    def grade(self, folder, shown, where, sid):
        """Grade the submission in FOLDER; its reports in WHERE (SID.json, .txt,
        .row) and gradescope/SID; (total, max, partial, note)."""
        tmp = tempfile.mkdtemp(prefix="collgrade-batch.", dir=os.environ.get("TMPDIR") or "/tmp")
        try:
            os.makedirs(os.path.join(tmp, "report"))
            note, files_in = self.copy(folder, os.path.join(tmp, "submission"))
            txt = os.path.join(tmp, "report", "report.txt")
            rc = 2
            if note:
                with open(txt, "w") as f:
                    f.write("collgrade: %s\n" % note)
            else:
                rc = self.sandboxed(tmp, files_in, txt)
            row = self.result(tmp, rc)
            if row is None:
                if not note:
                    note = ("the grading did not finish in %d s (COLLGRADE_BATCH_LIMIT)" % self.whole if rc in (124, 137)
                            else "the grading failed (exit %d): %s" % (rc, clip("\n".join(read_text(txt).split("\n")[-3:]), 200)))
                row = (fmt1(0), self.labmax, True, [])
                self.zero_reports(tmp, shown, note)
            elif row[3] and not note:   # capped: the limit its runs reached, named in the gradebook
                note = "limits reached: " + "; ".join(row[3])
            self.store(tmp, where, sid, shown, row, note)
            return row[0], row[1], row[2], note
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def copy(self, folder, dst):
        """A copy of the submission (its symbolic links not followed: one
        could make another file the graded one, or an #include); (why it
        cannot be graded or nothing, the --file argument)."""
        files, size = tree_size(folder, self.max_files)
        if files > self.max_files:
            os.makedirs(dst)
            return "the submission has more than %d files (COLLGRADE_MAX_FILES): not graded" % self.max_files, ""
        if size > self.max_mb << 20:
            os.makedirs(dst)
            return "the submission holds %d MB, more than %d MB (COLLGRADE_MAX_MB): not graded" % (size >> 20, self.max_mb), ""
        try:
            shutil.copytree(folder, dst, symlinks=True)
        except (shutil.Error, OSError):
            os.makedirs(dst, exist_ok=True)
        note = ""
        for w in self.conf.files():
            base = os.path.basename(w)
            if os.path.islink(os.path.join(dst, base)):
                note = "%s is a symbolic link, not a file: submit the file itself" % base
        remove_links(dst)
        if note:
            return note, ""
        found = []
        for w in self.conf.files():
            base = os.path.basename(w)
            if os.path.isfile(os.path.join(dst, base)):
                found.append("/tmp/submission/" + base)
                continue
            cs = [n for n in os.listdir(dst) if n.endswith(".c") and os.path.isfile(os.path.join(dst, n))]
            if len(self.conf.files()) == 1 and len(cs) == 1:
                found.append("/tmp/submission/" + cs[0])
            else:
                return "no %s in the submission" % base, ""
        return "", ",".join(found)

    def sandboxed(self, tmp, files_in, txt):
        """A collgrade of its own, in a sandbox of its own; its exit status."""
        cmd = (["bwrap"] + self.binds + ["--bind", os.path.join(tmp, "submission"), "/tmp/submission",
                               "--bind", os.path.join(tmp, "report"), "/tmp/report", "--chdir", "/tmp/submission",
                               "--setenv", "TMPDIR", "/tmp", "--setenv", "COLLGRADE_WORK", "/tmp/keep", "--setenv", "HOME", "/tmp",
                               "--setenv", "COLLGRADE_SANDBOX", "require",
                               "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
                               "--new-session", self.self_path, self.lab_dir, "--file", files_in]
               + (["--time-limit", str(self.a["tlimit"])] if self.a["tlimit"] else [])
               + ["--json", "/tmp/report/report.json", "--gradescope", "/tmp/report/results.json"])
        with open(txt, "wb") as f:
            child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=f, start_new_session=True,
                                     preexec_fn=with_limits(self.rlimits))
            try:
                return timed_wait(child, self.whole)
            except BaseException:
                os.killpg(child.pid, signal.SIGKILL)
                raise

    def result(self, tmp, rc):
        """(total, max, partial, limits reached) of what the sandboxed grading wrote, or None."""
        if rc > 3:
            return None
        try:
            with open(os.path.join(tmp, "report", "report.json"), encoding="utf-8") as f:
                r = json.load(f)
            return fmt1(float(r["total"])), int(r["max"]), bool(r["partial"]), [str(w) for w in r.get("limits", [])]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def zero_reports(self, tmp, shown, note):
        from .report import jstr, gradescope_zero
        with open(os.path.join(tmp, "report", "report.json"), "w", encoding="utf-8") as f:
            f.write('{"lab": %s, "file": %s, "total": 0.0, "max": %d, "partial": true, "partial_why": %s, "parts": []}\n'
                    % (jstr(self.labname), jstr(shown), self.labmax, jstr(note)))
        with open(os.path.join(tmp, "report", "results.json"), "w", encoding="utf-8") as f:
            f.write(gradescope_zero(note))

    def store(self, tmp, where, sid, shown, row, note):
        rep = os.path.join(tmp, "report")
        gs = os.path.join(self.out, "gradescope", sid) if where != os.path.join(self.out, "canary") else where
        os.makedirs(gs, exist_ok=True)
        with open(os.path.join(rep, "report.txt"), "rb") as f:
            text = f.read().decode("utf-8", "replace")
        with open(os.path.join(where, sid + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(one_line(l) for l in text.split("\n")))   # no escape code reaches a terminal
        shutil.copyfile(os.path.join(rep, "results.json"), os.path.join(gs, "results.json"))
        with open(os.path.join(where, sid + ".row"), "w", encoding="utf-8") as f:
            f.write("%s,%s,%s,%d,%s,%s\n" % (csv_cell(shown), sid, row[0], row[1], "true" if row[2] else "false", csv_cell(note)))
        shutil.copyfile(os.path.join(rep, "report.json"), os.path.join(where, sid + ".json.new"))
        os.replace(os.path.join(where, sid + ".json.new"), os.path.join(where, sid + ".json"))   # last: graded

    def gradebook(self):
        """The gradebook, whole, from every submission graded (now or before)."""
        rows = ["student,id,score,max,partial,note\n"]
        for sub in self.subs:
            try:
                with open(os.path.join(self.out, "students", student_id(sub) + ".row"), encoding="utf-8") as f:
                    rows.append(f.read())
            except OSError:
                pass
        book = os.path.join(self.out, "gradebook.csv")
        with open(book + ".new", "w", encoding="utf-8") as f:
            f.write("".join(rows))
        os.replace(book + ".new", book)
        say("collgrade: gradebook: %s (%d submission(s))" % (book, len(self.subs)))


def raise_stop(message):
    from .util import Stop
    raise Stop(message, 2)
