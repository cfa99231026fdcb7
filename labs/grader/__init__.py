"""collgrade, the autograder of the collkit labs, as modules: conf (lab.conf),
sandbox (bubblewrap, limits), integrity (the allow list on the object code),
parts (one class per part kind), diagnose (a run's end in words), grading
(one grading), report (text, JSON, JUnit, Gradescope) and batch (a class).
Standard library only: it runs wherever the kit runs."""
import os
import signal
import sys

from .util import Stop, die
from . import help as helptext

OPTIONS_WITH_VALUE = {"--file": "file", "--json": "json", "--gradescope": "gscope", "--junit": "junit",
                      "--np-max": "npmax", "--time-limit": "tlimit", "--batch": "batch", "--out": "bout",
                      "--canary": "canary"}
FLAGS = {"--keep": "keep", "--overwrite": "overwrite", "--regrade": "regrade", "--no-canary": "no_canary"}


def source_of(build):
    """The source tree a CMake build folder was configured from (its
    CMakeCache.txt says), or "" when build is no such folder."""
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


class Interrupted(Exception):
    pass


class Env:
    """Where the tools, the labs and the kept logs are."""

    def __init__(self, here):
        self.here = here
        self.bin = os.environ.get("COLLGRADE_BIN") or os.path.join(here, "..", "build", "bin")
        if os.access(os.path.join(here, "collkit-cc"), os.X_OK):
            self.bin = here   # installed beside the tools (build/bin, a student kit)
        self.labs = os.environ.get("COLLGRADE_LABS", "")
        tools = os.path.join(self.bin, "..")
        if not self.labs:
            # beside the program (a kit, the source tree), or the labs of the
            # source tree a build folder was made from, wherever that folder is
            for d in (here, os.path.join(here, "..", "labs"), os.path.join(here, "..", "..", "labs"),
                      os.path.join(source_of(tools), "labs")):
                if os.path.isfile(os.path.join(d, "01-ring", "lab.conf")):
                    self.labs = os.path.realpath(d)
                    break
        if os.path.isfile(os.path.join(tools, "CMakeCache.txt")):
            self.keeproot = os.path.join(tools, "labs")
        else:
            self.keeproot = os.path.join(tools, "build", "labs")
        self.keep = False
        self.current_box = None

    def tool(self, name):
        return os.path.join(self.bin, name)

    def keepdir(self, labname):
        return os.environ.get("COLLGRADE_WORK") or os.path.join(self.keeproot, labname)

    def allow_file(self, lab_dir):
        f = os.environ.get("COLLGRADE_ALLOW", "")
        for c in (os.path.join(lab_dir, "..", "allowed-symbols.txt"), os.path.join(self.labs, "allowed-symbols.txt"),
                  os.path.join(self.here, "allowed-symbols.txt"), os.path.join(self.here, "..", "labs", "allowed-symbols.txt")):
            if not f and os.path.isfile(c):
                f = c
        if not os.path.isfile(f):
            die("the allow list of the integrity parts (labs/allowed-symbols.txt) is not beside %s (set COLLGRADE_ALLOW)" % lab_dir)
        return f


def usage():
    sys.stderr.write(helptext.usage_text())
    raise Stop("", 2)


def parse(argv):
    a = {v: "" for v in OPTIONS_WITH_VALUE.values()}
    a.update({v: False for v in FLAGS.values()})
    a["lab"] = ""
    a["tlimit"] = os.environ.get("COLLGRADE_TIME_LIMIT", "")
    i = 0
    while i < len(argv):
        w = argv[i]
        if w in OPTIONS_WITH_VALUE:
            if i + 1 >= len(argv):
                usage()
            a[OPTIONS_WITH_VALUE[w]] = argv[i + 1]
            i += 2
            continue
        if w in FLAGS:
            a[FLAGS[w]] = True
        elif w in ("-h", "--help"):
            usage()
        elif w.startswith("-"):
            sys.stderr.write("collgrade: unknown option '%s'\n" % w)
            usage()
        elif a["lab"]:
            die("one lab at a time (got '%s' and '%s')" % (a["lab"], w))
        else:
            a["lab"] = w
        i += 1
    if not a["lab"]:
        usage()
    return a


def numbers(a):
    if a["npmax"] and not a["npmax"].isdigit():
        die("--np-max '%s': expected a number" % a["npmax"])
    a["npmax"] = int(a["npmax"]) if a["npmax"] else None
    t = a["tlimit"]
    if t:
        if not t.isdigit() or not t.isascii() or t.startswith("0"):
            die("--time-limit (or COLLGRADE_TIME_LIMIT) '%s': expected a whole number of seconds >= 1" % t)
        if len(t) > 6:
            die("--time-limit '%s': more than 999999 s" % t)
    a["tlimit"] = int(t) if t else None


def lab_folder(env, lab):
    if os.path.isdir(lab):
        return os.path.abspath(lab)
    if not env.labs:
        die("cannot find the labs folder (set COLLGRADE_LABS)")
    n = lab[3:] if lab.startswith("lab") else lab
    import glob
    found = sorted(glob.glob(os.path.join(glob.escape(env.labs), glob.escape(n) + "-*"))) + [os.path.join(env.labs, n)]
    found = [d for d in found if os.path.isdir(d)]
    if not found:
        have = " ".join(sorted(d for d in os.listdir(env.labs) if d[:1].isdigit() and os.path.isdir(os.path.join(env.labs, d))))
        die("no lab '%s' in %s (%s )" % (lab, env.labs, have))
    return found[0]


def report_files(a):
    """The report files, before anything is built: a file that holds
    something (the student's source named by mistake, an earlier report) is
    never lost."""
    for opt, key in (("--json", "json"), ("--junit", "junit"), ("--gradescope", "gscope")):
        f = a[key]
        if not f:
            continue
        if os.path.isdir(f):
            die("%s %s is a directory" % (opt, f))
        if os.path.isfile(f) and os.path.getsize(f) > 0 and not a["overwrite"]:
            die("%s %s exists (%d bytes): not written over (give another file, or --overwrite)" % (opt, f, os.path.getsize(f)))
        d = os.path.dirname(f) or "."
        if not os.path.exists(f) and not (os.path.isdir(d) and os.access(d, os.W_OK)):
            die("%s %s: %s is not a folder collgrade can write into" % (opt, f, d))


def student_files(a, conf, lab_dir):
    want = conf.files()
    if a["file"]:
        # --file a.c,b.c in the order of lab.conf's file =; one file is taken
        # whole (a comma is a character of its name then)
        files = [a["file"]] if len(want) == 1 else a["file"].split(",")
        if len(files) != len(want):
            die("--file names %d file(s), but %s's 'file =' names %d (%s): give every one, comma-separated, in that order"
                % (len(files), conf.path, len(want), " ".join(want)))
    else:
        files = [os.path.join(lab_dir, f) for f in want]
    for f in files:
        if not os.path.isfile(f):
            if a["file"]:
                die("no file %s (--file)" % f)
            die("no file %s, named by %s's 'file =' (make lab%s creates it from the skeleton)"
                % (f, conf.path, os.path.basename(os.path.dirname(f))[:2]))
    return files


def grade_one(env, a, conf, lab_dir):
    from .grading import Grading
    from . import report
    report_files(a)
    files = student_files(a, conf, lab_dir)
    for t in ("collkit-cc", "ckrun"):
        if not os.access(env.tool(t), os.X_OK):
            die("%s not found (build collkit first: make)" % env.tool(t))
    env.keep = a["keep"]
    g = Grading(env, conf, lab_dir, files, a["npmax"], a["tlimit"])
    g.run()
    sys.stdout.write(report.text(g))
    sys.stdout.flush()
    lab = os.path.basename(lab_dir)
    status = 0
    for key, write in (("json", lambda: report.as_json(g, lab, g.file_shown)), ("gscope", lambda: report.gradescope(g, lab)),
                       ("junit", lambda: report.junit(g, lab))):
        if a[key]:
            try:
                with open(a[key], "w", encoding="utf-8") as f:
                    f.write(write())
            except OSError:
                sys.stderr.write("collgrade: cannot write %s\n" % a[key])
                status = 2
    if status:
        return status
    if g.partial:
        return 3
    return 0 if g.total >= g.max else 1


def on_signal(signum, frame):
    raise Interrupted()


def main(here, argv):
    env = Env(here)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        a = parse(argv)
        numbers(a)
        lab_dir = lab_folder(env, a["lab"])
        from .conf import LabConf
        path = os.path.join(lab_dir, "lab.conf")
        if not os.path.isfile(path):
            die("%s has no lab.conf" % lab_dir)
        conf = LabConf(path)
        if a["batch"]:
            if a["file"] or a["json"] or a["junit"] or a["npmax"] is not None or a["gscope"]:
                die("--batch grades each submission's own file(s): --file, --json, --gradescope, --junit and --np-max do not go with it")
            from .batch import Batch
            return Batch(env, a, conf, lab_dir, os.path.join(here, os.path.basename(sys.argv[0]))).run()
        if a["bout"] or a["regrade"] or a["canary"] or a["no_canary"]:
            die("--out, --regrade, --canary and --no-canary go with --batch")
        return grade_one(env, a, conf, lab_dir)
    except Stop as e:
        if str(e):
            sys.stderr.write(str(e) + "\n")
        return e.status
    except Interrupted:
        if env.current_box is not None:
            env.current_box.interrupt()
        sys.stderr.write("collgrade: interrupted\n")
        return 130
