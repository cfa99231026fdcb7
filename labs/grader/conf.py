"""lab.conf: read whole and checked before anything is built or run.

A line collgrade cannot read is named with its file and line (exit 2), never
graded as something else. '#' starts a comment anywhere on a line.
"""
import re

from .util import die

KINDS = ["check", "integrity", "paired", "cost", "train", "pipeline", "save"]
COMMON_TAKES = ["algo", "needs", "limit"]   # every kind: the algorithm, a GPU, a time limit
KIND_TAKES = {"check": "np args verify", "integrity": "", "paired": "ref np size iters full zero args verify",
              "cost": "ref", "train": "np bucket rtol rows args plan", "pipeline": "np rows args",
              "save": "mode sizes kills"}
KIND_NEEDS = {"check": "np", "integrity": "", "paired": "ref np size full zero", "cost": "ref",
              "train": "np", "pipeline": "np args", "save": "mode"}
KEYS = ["title", "file", "algo", "from", "allow"]

NAME = r"[A-Za-z_][A-Za-z0-9_]*"
NUMBER = r"([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]+)?"
# What each option's value must look like, and what is said when it does not.
OPTION_FORMS = {
    "limit": (r"[1-9][0-9]{0,3}", "{k}={v}: expected seconds, 1 to 9999"),
    "iters": (r"[1-9][0-9]{0,6}", "{k}={v}: expected a whole number >= 1"),
    "rows": (r"[1-9][0-9]{0,6}", "{k}={v}: expected a whole number >= 1"),
    "kills": (r"[1-9][0-9]{0,6}", "{k}={v}: expected a whole number >= 1"),
    "full": (NUMBER, "{k}={v}: expected a number (0.8, 1e-5)"),
    "zero": (NUMBER, "{k}={v}: expected a number (0.8, 1e-5)"),
    "rtol": (NUMBER, "{k}={v}: expected a number (0.8, 1e-5)"),
    "bucket": (NUMBER, "{k}={v}: expected a number (0.8, 1e-5)"),
    "size": (r"[1-9][0-9]*[KkMmGg]?", "size={v}: expected bytes, a whole number with an optional K, M or G (64K, 4M)"),
    "needs": (r"gpu", "needs={v}: the only need known is gpu"),
    "algo": (NAME, "{k}={v}: not an algorithm name"),
    "ref": (NAME, "{k}={v}: not an algorithm name"),
    "mode": (r"crash|fail|durable|kill|integrity", "mode={v}: expected crash, fail, durable, kill or integrity"),
    "sizes": (r"[0-9]{1,9}(,[0-9]{1,9})*", "sizes={v}: expected sizes in bytes separated by commas (1,4099)"),
}


class Part:
    """One 'part NAME POINTS KIND OPTIONS' line."""

    def __init__(self, line, name, points, kind, opts):
        self.line, self.name, self.points, self.kind, self.opts = line, name, points, kind, opts

    def opt(self, key, default=""):
        return self.opts.get(key, default)


class LabConf:
    def __init__(self, path):
        self.path = path
        self.keys = {}
        self.parts = []
        self._read()

    def err(self, ln, why):
        die("%s:%d: %s" % (self.path, ln, why))

    def get(self, key):
        return self.keys.get(key, "")

    def files(self):
        return self.get("file").split()

    def algos(self):
        return self.get("algo").split()

    def _read(self):
        try:
            with open(self.path, "rb") as f:
                data = f.read().decode("utf-8", "replace")
        except OSError as e:
            die("cannot read %s: %s" % (self.path, e.strerror))
        lines = data.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        palgos = []
        for ln, raw in enumerate(lines, 1):
            if "\r" in raw:
                self.err(ln, "the line ends in a carriage return (Windows line endings): convert the file (sed -i 's/\\r$//' %s)" % self.path)
            line = raw.split("#", 1)[0]
            if not line.strip():
                continue
            m = re.fullmatch(r"\s*(" + NAME + r")\s*=\s*(.*?)\s*", line)
            if m:
                self._key(ln, m.group(1), m.group(2))
                continue
            self._part(ln, line, palgos)
        self._whole(palgos)

    def _key(self, ln, k, v):
        if k not in KEYS:
            self.err(ln, "unknown key '%s' (known: title, file, algo, from, allow; a graded part is 'part NAME POINTS KIND OPTIONS')" % k)
        if k in self.keys:
            self.err(ln, "'%s' is given twice (one '%s =' line, several values separated by spaces)" % (k, k))
        if not v:
            self.err(ln, "'%s =' has no value" % k)
        for w in v.split():
            if k == "algo" and not re.fullmatch(NAME, w):
                self.err(ln, "algo: '%s' is not an algorithm name (letters, digits, _)" % w)
            # C files, relative to the lab folder: no glob or shell character
            if k == "file" and not re.fullmatch(r"([A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*[.]c", w):
                self.err(ln, "file: '%s' is not a C file's path relative to the lab folder (letters, digits, '_', '.', '-', '/'; ending in .c)" % w)
            if k == "allow" and not re.fullmatch(NAME + r"[*]?", w):
                self.err(ln, "allow: '%s' is not a symbol name (letters, digits, _; a '*' at the end for a prefix)" % w)
        self.keys[k] = " ".join(v.split()) if k != "title" else v

    def _part(self, ln, line, palgos):
        ws = line.split()
        if ws[0] != "part":
            self.err(ln, "expected 'KEY = VALUE' or 'part NAME POINTS KIND OPTIONS', not '%s'" % " ".join(line.split())[:80])
        if len(ws) < 4:
            self.err(ln, "a part line is 'part NAME POINTS KIND OPTIONS': this one has no KIND")
        name, pts, kind, rest = ws[1], ws[2], ws[3], ws[4:]
        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
            self.err(ln, "part name '%s': letters, digits, '_', '.' and '-' only" % name)
        if any(p.name == name for p in self.parts):
            self.err(ln, "part '%s' is given twice (every part needs its own name)" % name)
        if not re.fullmatch(r"0|[1-9][0-9]{0,2}|1000", pts):
            self.err(ln, "part %s: points '%s': expected a whole number from 0 to 1000" % (name, pts))
        if kind not in KINDS:
            self.err(ln, "part %s: unknown kind '%s' (known: %s)" % (name, kind, ", ".join(KINDS)))
        takes = KIND_TAKES[kind].split() + COMMON_TAKES
        opts = {}
        for w in rest:
            if not re.fullmatch(r"[a-z]+=.+", w):
                self.err(ln, "part %s: '%s' is not an option KEY=VALUE (a space in a value is written '+')" % (name, w))
            k, v = w.split("=", 1)
            if k not in takes:
                self.err(ln, "part %s: unknown option '%s' for a %s part (it takes: %s)" % (name, k, kind, ", ".join(takes)))
            if k in opts:
                self.err(ln, "part %s: option '%s' is given twice" % (name, k))
            opts[k] = v
            self._option(ln, name, kind, k, v)
            if k == "algo":
                palgos.append((ln, name, v))
        for k in KIND_NEEDS[kind].split():
            if k not in opts:
                self.err(ln, "part %s: a %s part needs %s=..." % (name, kind, k))
        if kind == "paired" and not float(opts["full"]) > float(opts["zero"]):
            self.err(ln, "part %s: full=%s must be above zero=%s (full marks from full, none below zero)" % (name, opts["full"], opts["zero"]))
        self.parts.append(Part(ln, name, int(pts), kind, opts))

    def _option(self, ln, name, kind, k, v):
        if k == "np":
            check_np(self, ln, name, v, kind in ("paired", "pipeline"))
            return
        form = OPTION_FORMS.get(k)
        if form and not re.fullmatch(form[0], v):
            self.err(ln, "part %s: %s" % (name, form[1].format(k=k, v=v)))

    def _whole(self, palgos):
        if not self.parts:
            die("%s: no 'part' lines (part NAME POINTS KIND OPTIONS)" % self.path)
        # An algorithm is needed by the parts that run one (check, paired, cost, train).
        if any(p.kind in ("check", "paired", "cost", "train", "pipeline") for p in self.parts) and "algo" not in self.keys:
            die("%s: no 'algo =' line (the algorithm(s) the student's file registers)" % self.path)
        if "file" not in self.keys:
            die("%s: no 'file =' line (the student's file(s), in the lab folder)" % self.path)
        for ln, name, a in palgos:
            if a not in self.algos():
                self.err(ln, "part %s: algo=%s is not one of the lab's algorithms (algo = %s)" % (name, a, self.get("algo")))


def check_np(conf, ln, name, v, single):
    """np=: rank counts, 1 to 4096 (ckrun's range)."""
    if single:
        if not re.fullmatch(r"[1-9][0-9]{0,3}", v):
            conf.err(ln, "part %s: np=%s: expected one rank count, a whole number from 1 to 4096" % (name, v))
    elif not re.fullmatch(r"[1-9][0-9]{0,3}(,[1-9][0-9]{0,3})*", v):
        conf.err(ln, "part %s: np=%s: expected rank counts, whole numbers from 1 to 4096 separated by commas (np=1,2,4)" % (name, v))
    for n in v.split(","):
        if int(n) > 4096:
            conf.err(ln, "part %s: np=%s: %s ranks is more than 4096" % (name, v, n))
