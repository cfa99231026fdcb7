"""The part kinds, one class each; HELP is what --help says of the kind."""
import os
import re
import shutil
import subprocess

from . import diagnose as dg
from . import integrity
from .util import clip, fmt1, read_lines


def limit_for(g, np, part_limit=""):
    """A run's time limit in seconds: --time-limit, else the part's limit=,
    else 90 s + 10 s per rank: above the checker's bound on a hang it
    diagnoses itself (watchdog 20 s + 50 s for the others + 3 s to end: 73 s
    measured) plus the cases before it, and what a rank more costs on a small
    machine (a correct lab 01 ring: under 1 s at p = 8 on 2 cores)."""
    if g.tlimit:
        return g.tlimit
    if part_limit:
        return int(part_limit)
    return 90 + 10 * int(np)


def words(value):
    """An option's value with '+' for a space, as arguments."""
    return value.replace("+", " ").split()


def share(points, ok, total):
    return float(fmt1(points * ok / total)) if total else 0.0


def verified(g, vlog, args):
    """The trusted verdict: collverify recomputes what the student's process
    should have produced from the results file it wrote; True when it ends
    well with every case passed."""
    try:
        with open(vlog, "wb") as f:
            rc = subprocess.run([g.verify] + args, stdin=subprocess.DEVNULL, stdout=f, stderr=f, timeout=300).returncode
    except subprocess.TimeoutExpired:
        return False
    if rc != 0:
        return False
    closing = [l for l in read_lines(vlog) if re.fullmatch(r"[0-9]+ passed, [0-9]+ failed", l)]
    return bool(closing) and closing[-1].endswith(" passed, 0 failed")


def beside(g, items, run):
    """{item: run(item, box)} for each of ITEMS, COLLGRADE_JOBS of them at once
    (2 by default; 1 on one core), each in a sandbox of its own: the rank
    counts of a check part are independent runs of the one program built,
    and mostly wait (the launcher's start, the ranks' handshakes), so two
    beside each other take little more than one. The largest first: the
    longest runs do not come last."""
    jobs = int(os.environ.get("COLLGRADE_JOBS") or min(2, os.cpu_count() or 1))
    if jobs <= 1 or len(items) <= 1:
        return {i: run(i, g.box) for i in items}
    from concurrent.futures import ThreadPoolExecutor
    order = sorted(items, key=lambda i: -int(i) if str(i).isdigit() else 0)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {i: pool.submit(run, i, g.box.split()) for i in order}
        return {i: futures[i].result() for i in items}


class Kind:
    NAME = ""
    HELP = ""

    def __init__(self, g, part):
        self.g, self.part = g, part
        self.algo = part.opt("algo") or (g.algos[0] if g.algos else "")
        self.limit = part.opt("limit")

    def add(self, score, state, detail):
        self.g.add(self.part, score, state, detail)

    def objects(self):
        """The student's object files; none: the part fails, and says so."""
        objs = self.g.student_objs()
        if not objs:
            self.add(0.0, "failed", "object files of %s not found" % self.g.file_shown)
        return objs

    def not_run(self, skipped, sep):
        """Rank counts left out (--np-max) score nothing, and say so."""
        if not skipped:
            return ""
        self.g.left_out("rank counts above --np-max %s not run" % self.g.npmax)
        return "; p = %s not run (--np-max %s)" % (sep.join(skipped), self.g.npmax)


class Check(Kind):
    NAME = "check"
    HELP = """the checker (collcheck) at each rank count of np=: exact results,
guard bytes, traffic and message counts, hangs; a rank count
passes only when the run ends well AND the checker's closing
line counts every case passed (a program that ends early —
exit, MPI_Abort, MPI_Finalize — fails, and the verdict says so);
args= adds checker options ('+' for a space; --coll+allgather
checks a half, collverify too); verify= adds
collverify options (--traffic+ring: the library algorithm whose
traffic formulas the student's must meet; --allow-self-traffic)"""

    def grade(self):
        g, p = self.g, self.part
        args, vargs = words(p.opt("args")), words(p.opt("verify"))
        nps = p.opt("np").split(",")
        ran = [np for np in nps if g.npmax is None or int(np) <= g.npmax]
        skipped = [np for np in nps if np not in ran]
        whys = beside(g, ran, lambda np, box: self.one(np, args, vargs, box))
        ok = sum(1 for np in ran if not whys[np])
        first = next(("p = %s: %s" % (np, clip(re.sub(r"  +", " ", whys[np]), 600)) for np in ran if whys[np]), "")
        notrun = self.not_run(skipped, ",")
        sc = share(p.points, ok, len(nps))
        if first:   # (the speed parts are measured when every rank count run passed)
            g.check_full = False
        if ok == len(nps):
            self.add(sc, "graded", "%s at p = %s: all pass" % (self.algo, ",".join(ran)))
        elif not first:
            self.add(sc, "graded", "%s: %d of %d rank counts pass%s%s"
                     % (self.algo, ok, len(nps), " (p = %s)" % ",".join(ran) if ran else "", notrun))
        else:
            self.add(sc, "graded", "%s: %d of %d rank counts pass; first failure at %s%s"
                     % (self.algo, ok, len(nps), first, notrun))

    def one(self, np, args, vargs, box):
        """Why the checker's run at NP ranks failed (in BOX); nothing when it passed."""
        g = self.g
        out = "%s.check.%s.%s" % (g.log, self.part.name, np)
        lim = limit_for(g, np, self.limit)
        cmd = [g.tool("ckrun"), "-np", np, g.prog, "check", "--algo", self.algo, "--timeout", "20", "--seed", g.seed] + args
        if not g.verify:
            rc = box.limited(lim, out, cmd)
            return dg.check_why(box, out, rc, lim, self.algo)
        # The student's process only writes what it produced; the verdict is
        # collverify's, a program the student's code never runs in.
        res = "check.%s.%s.results" % (self.part.name, np)
        copy = box.collect(res)
        rc = box.limited(lim, out, cmd + ["--results", os.path.join(g.work, "run", res)])
        if rc == 0 and not box.left and verified(g, out + ".verify", ["--np", np, "--results", copy, "--algo", self.algo,
                                                                      "--seed", g.seed] + vargs + args):
            return ""
        why = dg.check_why(box, out, rc, lim, self.algo)
        if not why:   # (collverify's first failed case says why; its closing count only how many)
            fails = [l for l in read_lines(out + ".verify") if "  FAIL  " in l]
            why = "collverify: " + (re.sub(r"  +", " ", fails[0]) if fails else dg.last_lines(out + ".verify").split("\n")[-1])
        return why


class Integrity(Kind):
    NAME = "integrity"
    HELP = """the object code of the student's file(s) references only what
labs/allowed-symbols.txt (and the lab's allow =) lists: the
algorithm interface and a few C library calls; nothing else
(MPI, CUDA, NCCL, the library's internals, dl*, threads,
signals, processes, files, syscall), no system-call
instruction, no writable code or executable stack, no ELF magic (headers read by
hand), no global that replaces a library's, no constructor or
destructor but CK_REGISTER_ALGO's registration, no GNU
indirect function (its resolver runs at load time); scored in
proportion to the check/train/save parts. What can do or fake
the work (MPI, CUDA/NCCL, the library's internals, dl*,
threads, signals, processes, raw system calls, constructors, indirect
functions, exit handlers (atexit, on_exit), memory mapped or
made executable at run time (mmap, mprotect), writable code, a
replaced library function) voids every part that ran the
program: 0, with the score as run beside it"""

    def grade(self):
        g = self.g
        objs = self.objects()
        if not objs:
            return
        bad = g.integrity_verdict(objs)
        if not bad:
            self.add(float(self.part.points), "graded",
                     "references only the algorithm interface and the C library calls on the allow list")
            return
        self.add(0.0, "graded", "the file uses what this lab forbids: " + bad)
        if integrity.voids_work(bad):
            g.void_why = self.part.name


class Paired(Kind):
    NAME = "paired"
    HELP = """speed against the library's algorithm ref= in the same run
(collbench --paired: ABBA order, slowest rank per call) at np=,
size=; full marks from full=x the library's speed, none below
zero=x; measured only once the check parts are full marks;
every timed call's result checked, the ratio collverify's;
args= adds collbench options (--coll+reduce_scatter: a half
against the library's algorithm of that collective)"""

    def grade(self):
        g, p = self.g, self.part
        np = p.opt("np")
        if not g.check_full:
            self.add(0.0, "graded", "not measured: the correctness parts are not full marks")
            return
        if g.npmax is not None and int(np) > g.npmax:
            self.add(0.0, "graded", "not measured: p = %s is above --np-max %d" % (np, g.npmax))
            g.left_out("part %s (p = %s) not run: --np-max %d" % (p.name, np, g.npmax))
            return
        lim = limit_for(g, np, self.limit)
        csv = os.path.join(g.work, "run", "paired.csv")
        if os.path.lexists(csv):   # never a row from an earlier grading
            os.unlink(csv)
        copy = g.box.collect("paired.results") if g.verify else ""
        # (the grading's seed: the timed calls' inputs are as unguessable as the checker's)
        bench = ["--paired", "--algo", "%s,%s" % (p.opt("ref"), self.algo), "-b", p.opt("size"), "-e", p.opt("size"),
                 "-n", p.opt("iters", "30"), "-w", "3", "--model", "none", "--seed", g.seed] + words(p.opt("args"))
        extra = ["--results", os.path.join(g.work, "run", "paired.results")] if g.verify else []
        log = g.log + ".paired"
        rc = g.box.limited(lim, log, [g.tool("ckrun"), "-np", np, g.prog, "bench"] + bench + ["--csv", csv] + extra)
        if g.verify and rc == 0 and not g.box.left:
            self.verified_speed(log, copy, bench)
        elif rc != 0:
            self.add(0.0, "failed", "collbench --paired failed: " + clip(dg.run_why(g.box, log, rc, lim), 300))
        else:
            self.csv_speed(log, csv)

    def score(self, speed):
        p = self.part
        full, zero = float(p.opt("full")), float(p.opt("zero"))
        x = min(max((speed - zero) / (full - zero), 0.0), 1.0)
        return float(fmt1(p.points * x))

    def said(self, speed, verified_word, review=""):
        p = self.part
        return ("speed %sx the library's %s%s (t(%s)/t(%s), median of %s ABBA pairs, p = %s, %s bytes); full marks from "
                "%sx, none below %sx%s" % (speed, p.opt("ref"), verified_word, p.opt("ref"), self.algo, p.opt("iters", "30"),
                                           p.opt("np"), p.opt("size"), p.opt("full"), p.opt("zero"), review))

    def verified_speed(self, log, copy, bench):
        """The ratio collverify verified (every timed call's result checked),
        never the CSV row the student's process wrote."""
        g = self.g
        if not verified(g, log + ".verify", ["--np", self.part.opt("np"), "--results", copy]
                        + words(self.part.opt("verify")) + bench):
            why = dg.mpi_summary(log)   # a run that ended itself early says so, before the missing records
            if not why and any(l.startswith("0 passed, ") for l in read_lines(log + ".verify")):
                why = "no result record (the run ended before its timed calls)"
            if why:
                self.add(0.0, "failed", "collbench --paired ended before its result: " + why)
            else:
                self.add(0.0, "failed", "collverify: " + clip(dg.last_lines(log + ".verify").split("\n")[-1], 300))
            return
        speeds = [m.group(1) for m in (re.match(r".*ratio ([0-9][0-9.eE+-]*)", l) for l in read_lines(log + ".verify")) if m]
        speed = speeds[-1] if speeds else ""
        if not re.fullmatch(r"[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?", speed):
            self.add(0.0, "failed", "collverify printed no ratio")
            return
        review = ""
        lines = read_lines(log + ".verify")
        if any(re.search(r"\breview\b", l) for l in lines):
            review = "; capped and flagged for review: far above the library's speed"
        else:
            review = self.interval_review(lines)
        self.add(self.score(float(speed)), "graded", self.said(speed, ", verified", review))

    def interval_review(self, lines):
        """'; review: ...' where the median's 95 % interval (collverify's,
        from the pairs) spans the full-marks or the zero line: the mark is the
        median's, but another run on a busier or quieter machine could land on
        the other side of that line, so a person should look before it counts."""
        p = self.part
        m = None
        for l in lines:
            m = re.match(r"ratio \S+ at \d+ B interval ([0-9][0-9.eE+-]*) ([0-9][0-9.eE+-]*) of (\d+) pairs", l) or m
        if not m:
            return ""
        lo, hi = float(m.group(1)), float(m.group(2))
        crossed = ["the %s line (%sx)" % (name, p.opt(key)) for name, key in (("full-marks", "full"), ("no-marks", "zero"))
                   if lo < float(p.opt(key)) < hi]
        if not crossed:
            return ""
        return ("; review: the 95 %% interval of the %s pairs, %.3fx to %.3fx, spans %s, so the mark may move with "
                "the machine's load" % (m.group(3), lo, hi, " and ".join(crossed)))

    def csv_speed(self, log, csv):
        """A run that ended well must have written its row: the speed (column
        7) a finite number, and no wrong element in the student's check (column 12)."""
        row = None
        for l in read_lines(csv)[1:]:
            f = l.split(",")
            if len(f) >= 2 and f[0] == self.part.opt("ref") and f[1] == self.algo:
                row = f
                break
        if row is None:
            self.add(0.0, "failed", "collbench --paired ended before its result: " + (dg.mpi_summary(log) or "no result row in its CSV"))
            return
        speed = row[6] if len(row) > 6 else ""
        wrong = row[11] if len(row) > 11 else ""
        if not re.fullmatch(r"[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?", speed) or (wrong or "0") != "0":
            self.add(0.0, "failed", "collbench --paired gave no usable result: speed '%s', wrong elements '%s'" % (speed, wrong or "?"))
            return
        self.add(self.score(float(speed)), "graded", self.said(speed, ""))


FINITE = re.compile(r"[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?")


class Cost(Kind):
    NAME = "cost"
    HELP = """the descriptor's α-β-γ cost function against the library
algorithm ref='s model (collbench --extrapolate --every-p, fixed
parameters) at every p = 2..64, 8 B..1 GB; a value that is not a
finite number (nan, inf) gets nothing"""

    def grade(self):
        g = self.g
        ref, lim = self.part.opt("ref"), limit_for(g, 0, self.limit)
        params = g.log + ".params"
        with open(params, "w") as f:
            f.write("alpha_us 2\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\nchunk_bytes 262144\n")
        copy = g.box.collect("cost.csv")
        log = g.log + ".cost"
        rc = g.box.limited(lim, log, [g.prog, "bench", "--extrapolate", "--model", params, "--algo", "%s,%s" % (self.algo, ref),
                                      "--pmax", "64", "--every-p", "--csv", os.path.join(g.work, "run", "cost.csv")])
        if rc != 0:
            why = ("timed out after %s s: the cost function never returned" % lim if dg.timed_out(rc)
                   else "\n".join(read_lines(log)[-3:]))
            self.add(0.0, "failed", "collbench --extrapolate failed: " + clip(why, 300))
            return
        bad = self.compare(read_lines(copy), ref) if os.path.isfile(copy) else ""
        bad = bad if os.path.isfile(copy) else "collbench --extrapolate wrote no model (cost.csv)"
        if not bad:
            self.add(float(self.part.points), "graded",
                     "%s's cost function agrees with the α-β-γ model of %s (p = 2..64, 8 B..1 GB)" % (self.algo, ref))
        else:
            self.add(0.0, "graded", bad)

    def compare(self, lines, ref):
        """Nothing when every cost agrees with the model within 1e-3; else
        where it does not (every value a finite number first)."""
        a = self.algo
        mine, model, order, seen = {}, {}, [], set()
        for l in lines[1:]:
            if not l:
                continue
            f = (l.split(",") + ["", "", ""])[:4]
            key = (f[0], f[1], f[2])
            if f[0] in (a, ref) and key in seen:
                return ("the model file gives the cost of %s at p = %s, n = %s B twice (a line the program added to what "
                        "the model wrote)" % (f[0], f[1], f[2]))
            seen.add(key)
            if f[0] == a:
                mine[(f[1], f[2])] = f[3]
            if f[0] == ref:
                model[(f[1], f[2])] = f[3]
                order.append((f[1], f[2]))
        if not order:
            return "the reference has no model"
        for k in order:   # in the file order: the smallest p, then n
            if k not in mine:
                return "%s declares no cost function (ck_algo.cost)" % a
            if not FINITE.fullmatch(mine[k]):
                return "at p = %d, n = %d B your cost says %s us: a cost must be a finite number (not nan or inf)" % (
                    int(k[0]), int(k[1]), mine[k])
            if not FINITE.fullmatch(model[k]):
                return "the model of %s is not a finite number at p = %d, n = %d B (%s)" % (ref, int(k[0]), int(k[1]), model[k])
        worst, at = 0.0, None
        for k in sorted(model, key=lambda k: (int(float(k[0])), int(float(k[1])))):   # ties: the smallest p, then n
            r = float(model[k])
            d = abs(float(mine[k]) - r) / (r if r > 0 else 1)
            if d > worst * (1 + 1e-9):
                worst, at = d, k
        if worst <= 1e-3:
            return ""
        return "at p = %d, n = %d B your cost says %.4g us, the model of %s %.4g us" % (
            int(at[0]), int(at[1]), float(mine[at]), ref, float(model[at]))


def synth_data(kind, tdir, tools):
    """A fresh tdir with synthetic data in it (tagsynth, rows=): its path;
    None when a tool is missing or tagsynth fails (the part failed, said why)."""
    g, p = kind.g, kind.part
    for t in tools:
        if not os.access(g.tool(t), os.X_OK):
            kind.add(0.0, "failed", "%s not found" % g.tool(t))
            g.left_out("part %s: %s not found" % (p.name, t))
            return None
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    data = os.path.join(tdir, "data.csv")
    with open(g.log + ".train.data", "wb") as f:
        rc = subprocess.run([g.tool("tagsynth"), "--rows", p.opt("rows", "720"), "--seed", "1", "--out", data],
                            stdin=subprocess.DEVNULL, stdout=f, stderr=f).returncode
    if rc != 0:
        kind.add(0.0, "failed", "tagsynth failed: " + clip("\n".join(read_lines(g.log + ".train.data")[-3:]), 300))
        return None
    return data


class Train(Kind):
    NAME = "train"
    HELP = """data-parallel equivalence in the trainer: the program's `train`
(tagtrain with --algo ALGO) at p = 1, then at each np= (and,
with bucket=MB, again with --bucket-mb MB: the all-reduce then
runs on the async engine's thread), same global batch, on
synthetic data (tagsynth, rows= rows), dropout 0, --check-sync;
each run's last.ckpt must equal the 1-rank run's within rtol=
(ckptdiff, default 1e-5); args= more tagtrain options; plan= options
of the np= runs only (a model-parallel plan: --pp+2+...), the
1-rank reference running without them"""

    def grade(self):
        g, p = self.g, self.part
        tdir = os.path.join(g.work, "run", "train")
        data = synth_data(self, tdir, ("tagsynth", "ckptdiff"))
        if not data:
            return
        # One configuration for every run: only the rank count (and buckets) differ.
        self.args = ["--algo", self.algo, "--data", data, "--folds", "5", "--fold", "5", "--dropout", "0",
                     "--save-every", "1000", "--quiet"] + words(p.opt("args"))
        self.tlog = "%s.train.%s" % (g.log, p.name)
        lim = limit_for(g, 1, self.limit)
        rc = g.box.limited(lim, self.tlog + ".p1", [g.tool("ckrun"), "-np", "1", g.prog, "train"] + self.args
                           + ["--save", os.path.join(tdir, "p1")])
        why = dg.train_why(g.box, self.tlog + ".p1", rc, lim, os.path.join(tdir, "p1", "last.ckpt"), "last.ckpt")
        if why:
            self.add(0.0, "failed", "the 1-rank reference run failed: " + clip(why, 400))
            return
        # The reference out of every later run's reach (the runs write only in work/run).
        self.ref = os.path.join(g.work, "ref.%s.ckpt" % p.name)
        shutil.copyfile(os.path.join(tdir, "p1", "last.ckpt"), self.ref)
        self.runs(tdir)

    def runs(self, tdir):
        g, p = self.g, self.part
        bucket, rtol = p.opt("bucket"), p.opt("rtol", "1e-5")
        ok, total, first, ran, skipped = 0, 0, "", [], []
        for np in p.opt("np").split(","):
            for mode in ["dense"] + (["bucketed"] if bucket else []):
                extra = ["--bucket-mb", bucket] if mode == "bucketed" else []
                total += 1
                if g.npmax is not None and int(np) > g.npmax:
                    skipped.append("%s %s" % (np, mode))
                    continue
                ran.append("%s %s" % (np, mode))
                why = self.one(np, mode, extra, rtol, tdir)
                if not why:
                    ok += 1
                elif not first:
                    first = "p = %s (%s%s): %s" % (np, mode, ", " + " ".join(extra) if extra else "", why)
        notrun = self.not_run(skipped, ", ")
        sc = share(p.points, ok, total)
        if ok == total:
            self.add(sc, "graded", "%s in tagtrain at p = %s: parameters equal the 1-rank run's within %s" % (self.algo, ", ".join(ran), rtol))
        elif not first:
            self.add(sc, "graded", "%s in tagtrain: %d of %d runs equal the 1-rank run's%s" % (self.algo, ok, total, notrun))
        else:
            self.add(sc, "graded", "%s in tagtrain: %d of %d runs equal the 1-rank run's; first failure at %s%s"
                     % (self.algo, ok, total, first, notrun))

    def one(self, np, mode, extra, rtol, tdir):
        g = self.g
        out = "%s.p%s.%s" % (self.tlog, np, mode)
        lim = limit_for(g, np, self.limit)
        save = os.path.join(tdir, "p%s.%s" % (np, mode))
        rc = g.box.limited(lim, out, [g.tool("ckrun"), "-np", np, g.prog, "train"] + self.args + extra
                           + words(self.part.opt("plan")) + ["--check-sync", "--save", save], env={"COLLKIT_TIMEOUT": "30"})
        why = dg.train_why(g.box, out, rc, lim, os.path.join(save, "last.ckpt"), "last.ckpt")
        if why:
            return why
        with open(out + ".diff", "wb") as f:
            rc = subprocess.run([g.tool("ckptdiff"), self.ref, os.path.join(save, "last.ckpt"), "--rtol", rtol],
                                stdin=subprocess.DEVNULL, stdout=f, stderr=f).returncode
        if rc == 0:
            return ""
        lines = read_lines(out + ".diff")
        diff = [re.sub(r"^ckptdiff: [0-9]* parameters; ", "", l) for l in lines if "max |a - b|" in l]
        return "parameters differ from the 1-rank run's: " + (diff[0] if diff else "\n".join(lines[-3:]))


def trace_steps(path):
    """A tagtrain --pp trace's forwards and backwards: {call: {stage: [(kind,
    micro-batch, start, length)] in order of start}}."""
    import json
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    steps = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("fwd", "bwd"):
            a = e["args"]
            op = ("F" if e["cat"] == "fwd" else "B", int(a["step"]), float(e["ts"]), float(e["dur"]))
            steps.setdefault(int(a["call"]), {}).setdefault(int(e["pid"]), []).append(op)
    for st in steps.values():
        for ops in st.values():
            ops.sort(key=lambda o: o[2])
    return steps


def unit_bubble(order, S, M):
    """The order played with F 1 and B 2 time units (an F k waits for stage
    s-1's F k, a B k for stage s+1's B k): the stages' mean idle share of the
    step; None when it would hang."""
    end, t, pc, left = {}, [0] * S, [0] * S, 2 * M * S
    while left:
        moved = False
        for s in range(S):
            while pc[s] < 2 * M:
                kind, k = order[s][pc[s]][:2]
                dep = (s - 1, "F", k) if kind == "F" and s > 0 else (s + 1, "B", k) if kind == "B" and s < S - 1 else None
                if dep and dep not in end:
                    break
                t[s] = max(t[s], end[dep] if dep else 0) + (1 if kind == "F" else 2)
                end[(s, kind, k)] = t[s]
                pc[s], left, moved = pc[s] + 1, left - 1, True
        if not moved:
            return None
    T = max(t)
    return sum(T - 3 * M for _ in range(S)) / (S * T)


def judge_step(st):
    """One step's schedule: (slots ok, bubble ok, what it was), or (None, None, why) when it is no whole schedule."""
    S = len(st)
    if sorted(st) != list(range(S)):
        return None, None, "the stages traced are %s, not 0..%d" % (sorted(st), S - 1)
    M = len(st[0]) // 2
    held = []
    for s in range(S):
        if sorted((o[0], o[1]) for o in st[s]) != sorted([("F", k) for k in range(M)] + [("B", k) for k in range(M)]):
            return None, None, "stage %d did not run each F k and B k once" % s
        n, most = 0, 0
        for o in st[s]:
            n += 1 if o[0] == "F" else -1
            most = max(most, n)
        held.append(most)
    bubble, model = unit_bubble(st, S, M), (S - 1) / (M + S - 1)
    slots_ok = all(held[s] <= min(S - s, M) for s in range(S))
    bubble_ok = bubble is not None and abs(bubble - model) < 1e-9
    said = "micro-batches held per stage %s (1F1B: %s), bubble in unit time %s (model (S-1)/(M+S-1) = %.3f)" % (
        ",".join(map(str, held)), ",".join(str(min(S - s, M)) for s in range(S)),
        "%.3f" % bubble if bubble is not None else "none (it would hang)", model)
    return slots_ok, bubble_ok, said


def measured_bubble(st):
    """The share of the step the stages spent between their operations, as measured."""
    t0 = min(o[2] for ops in st.values() for o in ops)
    t1 = max(o[2] + o[3] for ops in st.values() for o in ops)
    busy = [sum(o[3] for o in ops) for ops in st.values()]
    return sum(1 - b / (t1 - t0) for b in busy) / len(busy) if t1 > t0 else 0.0


class Pipeline(Kind):
    NAME = "pipeline"
    HELP = """a pipeline schedule as it ran: the program's `train` at p = np=
(one rank count) with args= (--pp+S+--microbatches+M+--pp-schedule+
NAME), one epoch on synthetic data (rows=), traced (--trace); each
step's order of forwards (F k) and backwards (B k) on every stage
is read back from the trace. Full points when no stage held more
micro-batches between their F and B than 1F1B's S - stage, and the
order's bubble, played with F 1 and B 2 time units, is the model's
(S-1)/(M+S-1); half when only the first holds; none when a stage
held more (GPipe holds M: not the schedule asked). The bubble
measured in the run is shown beside it"""

    def grade(self):
        g, p = self.g, self.part
        tdir = os.path.join(g.work, "run", "pipeline")
        data = synth_data(self, tdir, ("tagsynth",))
        if not data:
            return
        np, trace = p.opt("np"), os.path.join(tdir, "trace.json")
        if g.npmax is not None and int(np) > g.npmax:
            self.add(0.0, "graded", self.not_run([np], ","))
            return
        out, lim = "%s.pipeline.%s" % (g.log, p.name), limit_for(g, np, self.limit)
        rc = g.box.limited(lim, out, [g.tool("ckrun"), "-np", np, g.prog, "train", "--algo", self.algo, "--data", data,
                                      "--folds", "5", "--fold", "5", "--epochs", "1", "--dropout", "0", "--no-save",
                                      "--quiet", "--trace", trace] + words(p.opt("args")), env={"COLLKIT_TIMEOUT": "30"})
        why = dg.train_why(g.box, out, rc, lim, trace, "trace")
        if why:
            self.add(0.0, "failed", "the traced run failed: " + clip(why, 400))
            return
        try:
            steps = trace_steps(trace)
        except (OSError, ValueError, KeyError, TypeError) as e:
            self.add(0.0, "failed", "the run's trace could not be read: %s" % clip(str(e), 200))
            return
        if not steps:
            self.add(0.0, "failed", "the run's trace has no forwards or backwards (was it run with --pp?)")
            return
        verdicts = [judge_step(steps[c]) for c in sorted(steps)]
        slots_ok, bubble_ok, said = min(verdicts, key=lambda v: (v[0] is not None, bool(v[0]), bool(v[1])))
        bubbles = sorted(measured_bubble(steps[c]) for c in steps)
        said += "; measured %.3f (median of %d steps)" % (bubbles[len(bubbles) // 2], len(bubbles))
        if slots_ok is None:
            self.add(0.0, "graded", said)
        elif not slots_ok:
            self.add(0.0, "graded", "not 1F1B: a stage held more micro-batches than S - stage: " + said)
        else:
            self.add(p.points if bubble_ok else share(p.points, 1, 2), "graded",
                     ("1F1B: " if bubble_ok else "the bubble is not the model's: ") + said)


class Save(Kind):
    NAME = "save"
    HELP = """lab 06: a saver file (CK_REGISTER_SAVER) under the crash
harness (PROG save) for each body size in sizes= (bytes);
mode=crash: killed before each file-system call K, then no
crash: state.bin old or new, whole; mode=fail: each call
failing (ENOSPC, EIO): -1 with errno, state.bin as it was, no
temporary file; mode=durable: fsync of the file before the
rename, of the directory after; mode=kill: the save (untraced)
killed with SIGKILL at kills= (default 100) random moments of
its measured duration: old or new version, whole, each time,
and my_recover leaves nothing else; mode=integrity: no stdio on
files, no other program, no library code, no system call the
harness cannot follow (io_uring, a shared file mapping ...).
The harness traces the save at the system-call level (ptrace):
every way of touching a file is a counted call"""

    # Lab 06: the saver file's crash harness (PROG save, plugin/save.c), in a
    # fresh directory for every run; its last line is its verdict (save: PASS,
    # FAIL, RULES: contents right, a durability rule broken; COUNT N).
    def grade(self):
        g, p = self.g, self.part
        self.mode = p.opt("mode")
        self.lim = limit_for(g, 0, self.limit or "20")
        self.sdir = os.path.join(g.work, "run", "save." + p.name)
        self.d = os.path.join(self.sdir, "d")
        if self.mode == "integrity":
            self.rules()
            return
        sizes = (p.opt("sizes") or "4099").split(",")
        units, ok, first, counts = 0, 0, "", []
        for z in sizes:
            units += 1
            bad, count = self.size(z)
            if count:
                counts.append(count)
            if not bad:
                ok += 1
            elif not first:
                first = "size %s B: %s" % (z, clip(bad, 600))
        if self.mode == "fail":   # the edge cases: 0 bytes, a directory that does not exist
            units += 1
            rc = self.run(self.sdir + ".edge", ["--edge"])
            if self.verdict(self.sdir + ".edge").startswith("save: PASS "):
                ok += 1
            elif not first:
                first = "the edge cases: " + clip(self.why(self.sdir + ".edge", rc), 600)
        shutil.rmtree(self.d, ignore_errors=True)
        sc = share(p.points, ok, units)
        if ok < units:
            self.add(sc, "graded", "%d of %d checks pass; first failure at %s" % (ok, units, first))
            return
        zs, kills = ", ".join(sizes), p.opt("kills", "100")
        said = {
            "crash": "killed before each call (sizes %s B: %s calls) and with no crash: old or new version, whole; "
                     "my_recover leaves only state.bin" % (zs, ", ".join(counts)),
            "fail": "each call failing with ENOSPC and EIO (sizes %s B: %s calls): -1 with errno, state.bin as it was, "
                    "no temporary file; 0 bytes and a missing directory handled" % (zs, ", ".join(counts)),
            "durable": "fsync of the file before its rename onto state.bin, the directory's fsync after (sizes %s B)" % zs,
            "kill": "killed at %s random moments of each save (%s): old or new version, whole, every time; my_recover "
                    "leaves only state.bin" % (kills, "; ".join(counts)),
        }
        self.add(sc, "graded", said[self.mode])

    def fresh(self):
        shutil.rmtree(self.d, ignore_errors=True)
        os.makedirs(self.d)

    def run(self, log, args):
        """One run of the harness on a fresh folder; its exit status."""
        self.fresh()
        return self.g.box.limited(self.lim, log, [self.g.prog, "save", "--dir", self.d] + args)

    def rerun(self, log, args):
        """One run of the harness on the folder as the last run left it."""
        return self.g.box.limited(self.lim, log, [self.g.prog, "save", "--dir", self.d] + args)

    def verdict(self, log):
        if self.g.box.left:
            return "save: LEFT"
        v = [l for l in read_lines(log) if re.match(r"^save: (PASS|FAIL|RULES|COUNT) ", l)]
        return v[-1] if v else ""

    def why(self, log, rc):
        """Why a run gave no PASS, in one phrase."""
        box, v = self.g.box, self.verdict(log)
        if box.overflow:
            return box.overflow
        if box.left:
            return dg.left_why(box.left)
        if v:
            v = v[len("save: "):]
            return v.split(" ", 1)[1] if " " in v else ""
        if dg.timed_out(rc):
            return dg.timeout_why(self.lim)
        if rc > 128:
            import signal
            try:
                name = signal.Signals(rc - 128).name
            except ValueError:
                name = "SIG?"
            return "the program was killed by signal %d (%s)" % (rc - 128, name)
        return dg.own_error(log) or "exit status %d: %s" % (rc, clip(dg.last_lines(log), 300))

    def size(self, z):
        """(why the checks at body size Z failed or nothing, the count said)."""
        log = "%s.%s" % (self.sdir, z)
        if self.mode == "kill":   # no counting: a real process killed at random moments
            rc = self.run(log + ".run", ["--size", z, "--kill-random", self.part.opt("kills", "100")])
            v = self.verdict(log + ".run")
            if v.startswith("save: PASS "):
                m = re.match(r".*\(([0-9]* B, about [0-9]* us);", v)
                return "", m.group(1) if m else ""
            return self.why(log + ".run", rc), ""
        rc = self.run(log + ".count", ["--size", z, "--count"])
        m = re.match(r"^save: COUNT ([0-9]+) ", self.verdict(log + ".count"))
        if not m:
            return self.why(log + ".count", rc), ""
        n = int(m.group(1))
        if self.mode == "durable":
            rc = self.run(log + ".run", ["--size", z])
            return ("" if self.verdict(log + ".run").startswith("save: PASS ") else self.why(log + ".run", rc)), str(n)
        if self.mode == "crash":
            return self.crashes(log, z, n), str(n)
        for k in range(1, n + 1):
            for e in ("ENOSPC", "EIO"):
                rc = self.run(log + ".run", ["--size", z, "--fail-at", str(k), "--errno", e])
                if not self.verdict(log + ".run").startswith("save: PASS "):
                    return self.why(log + ".run", rc), str(n)
        return "", str(n)

    def crashes(self, log, z, n):
        for k in range(1, n + 2):
            rc = self.run(log + ".run", ["--size", z, "--crash-at", str(k)])
            crashed = [l[len("save: crash at call "):] for l in read_lines(log + ".run") if l.startswith("save: crash at call ")]
            if rc == 137 and crashed:
                rc = self.rerun(log + ".verify", ["--size", z, "--verify"])
                if not self.verdict(log + ".verify").startswith("save: PASS "):
                    c = crashed[0]
                    return "crash at call %s (%s): %s" % (c.split(":", 1)[0], c.split(": ", 1)[-1], self.why(log + ".verify", rc))
            elif not re.match(r"save: (PASS|RULES) ", self.verdict(log + ".run")):
                return ("" if k > n else "crash at call %d: " % k) + self.why(log + ".run", rc)
        return ""

    def rules(self):
        """mode=integrity: what its save may not use, the allow list as every
        lab, and what the harness refuses at run time (the save traced once)."""
        objs = self.objects()
        if not objs:
            return
        bad = integrity.save_forbidden(objs)
        more = self.g.integrity_verdict(objs)
        if more:
            bad.append(more)
            if integrity.voids_work(more):
                self.g.void_why = self.part.name
        log = self.sdir + ".count"
        self.run(log, ["--count"])
        refused = [m.group(1) for m in (re.match(r"^save: REFUSED the save made system calls the harness cannot follow: (.*) \(refused", l)
                                        for l in read_lines(log)) if m]
        if refused:
            bad.append("%s (system calls the harness cannot follow, refused at run time)" % refused[-1])
        shutil.rmtree(self.d, ignore_errors=True)
        if not bad:
            self.add(float(self.part.points), "graded", "only the calls the harness sees: no stdio on files, no other program, no library writer")
        else:
            self.add(0.0, "graded", "the file uses what this lab forbids: " + "; ".join(bad))


KINDS = {k.NAME: k for k in (Check, Integrity, Paired, Cost, Train, Pipeline, Save)}
