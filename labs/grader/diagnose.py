"""How a run ended, in words: what the checker, the launcher and the
library printed, read from a run's log."""
import re

from .util import read_lines, read_text, clip

TIMED_OUT = (124, 137)


def timed_out(rc):
    return rc in TIMED_OUT


def timeout_why(limit):
    return "timed out after %s s: the solution never finished (an endless loop, or a wait the watchdog cannot see)" % limit


def left_why(left):
    if not left:
        return ""
    return ("the program left %d process(es) behind: something it started (a fork, a thread of another program) "
            "was still running when its run ended" % left)


# What the launcher says about a rank that ended the job (Open MPI's
# messages; MPICH's): the first kind found, its last occurrence.
MPI_ENDS = [
    (r"MPI_ABORT was invoked on rank ([0-9]+) in communicator [^ ]+ with errorcode (-?[0-9]+)",
     "rank {0} called MPI_Abort (error code {1})"),
    (r"process rank ([0-9]+) with PID [0-9]+ on node [^ ]+ exited on signal ([0-9]+) \(([^)]*)\)",
     "rank {0} was killed by signal {1} ({2})"),
    (r"process rank ([0-9]+) with PID [0-9]+ on node [^ ]+ exiting improperly",
     "rank {0} ended without finalizing MPI (an exit, or a return from main, in the middle of the run)"),
    (r"Process name: \[\[[0-9]+,[0-9]+\],([0-9]+)\] Exit code: (-?[0-9]+)", "rank {0} exited with status {1}"),
    (r"BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES.* EXIT CODE: ([0-9]+)",
     "a rank ended the job with exit code {0}"),
]


def mpi_summary(path):
    text = " ".join(read_text(path).split())
    for pattern, said in MPI_ENDS:
        m = re.match(".*" + pattern, text, re.S)
        if m:
            return said.format(*m.groups())
    return ""


def last_lines(path, n=3):
    """The end of a log without the launcher's boilerplate."""
    keep = [l for l in read_lines(path) if not re.match(r"^-+$|^\[[^]]*\] |^\s*$", l)]
    return "\n".join(keep[-n:])


def own_error(path):
    """Errors that speak for themselves: the program ended before its driver
    was done (collcheck's exit handler), a sanitizer, the library's watchdog."""
    lines = read_lines(path)
    for l in lines:
        m = re.search(r"the program ended before the checker finished.*", l)
        if m:
            return m.group(0)
    for pattern in (r"runtime error:|ERROR: [A-Za-z]*Sanitizer|AddressSanitizer:", r"collkit watchdog: "):
        for l in lines:
            if re.search(pattern, l):
                return l
    return ""


def first_match(path, pattern):
    for l in read_lines(path):
        if re.search(pattern, l):
            return l
    return ""


class CheckerLog:
    """The checker's lines: a case's label (printed before the case runs),
    then PASS or FAIL and the diagnosis (after it). A rank's own output can
    come in between, so a verdict is "PASS"/"FAIL  " at the start of a line
    or after two spaces, wherever it landed, and belongs to the last label
    before it."""

    def __init__(self, path, algo):
        self.lines = read_lines(path)
        self.label = re.compile(r"^%s +n=[0-9]+ +[a-z0-9]+ +([a-z]+|-) +(out-of-place|in-place)( misaligned)?( random)?"
                                % re.escape(algo))

    def cases(self):
        """The number of cases of the matrix, from collcheck's first line."""
        for l in self.lines:
            m = re.match(r".*collcheck: [0-9]+ ranks?, .* ([0-9]+) cases per algorithm", l)
            if m:
                return m.group(1)
        return ""

    def closing(self):
        last = ""
        for l in self.lines:
            m = re.search(r"[0-9]+ passed, [0-9]+ failed$", l)
            if m:
                last = m.group(0)
        return last

    def in_case(self):
        """The case that was announced and never finished."""
        lab, done = "", False
        for l in self.lines:
            m = self.label.match(l)
            if m:
                lab, done = m.group(0), False
            if re.search(r"(^|  )(PASS|FAIL)( |$)", l):
                done = True
        return re.sub(r"  +", " ", lab) if lab and not done else ""

    def first_fail(self):
        """The first FAIL line, with its case's label in front when a rank's
        output split them."""
        lab, at = "", None
        for l in self.lines:
            m = self.label.match(l)
            if m:
                lab, at = m.group(0), l
            f = re.search(r"(^|  )FAIL  ", l)
            if f:
                if l == at or not lab:
                    return l
                return lab + "  " + l[f.start():].lstrip(" ")
        return ""

    def finished(self):
        """Cases with data (n=0 never calls the algorithm) that finished."""
        data, k, total = False, 0, 0
        for l in self.lines:
            if self.label.match(l):
                data = " n=0 " not in l
            if re.search(r"(^|  )(PASS|FAIL)( |$)", l):
                total += 1
                if data:
                    k += 1
        return total if k else 0

    def first_collcheck(self):
        for l in self.lines:
            if l.startswith("collcheck: ") and "cases per algorithm" not in l:
                return l
        return ""


def check_why(box, path, rc, limit, algo):
    """Nothing when the checker's run finished with every case passed;
    otherwise why not, in one line. The run must end well (status 0) AND the
    checker must have printed its closing line with every case of its matrix
    passed: a program that ends itself (MPI_Abort with 0, MPI_Finalize and
    exit) can leave the launcher's status at 0."""
    if box.overflow:
        return box.overflow
    if box.left:
        return left_why(box.left) + ("; its run was stopped at the time limit (%s s) waiting for them" % limit
                                     if timed_out(rc) else "")
    log = CheckerLog(path, algo)
    n, closing, fail = log.cases(), log.closing(), log.first_fail()
    m = re.match(r"([0-9]+) passed, ([0-9]+) failed", closing)
    # (and no case's FAIL anywhere: a closing line printed by the program
    # itself cannot hide the checker's verdicts before it)
    if rc == 0 and n and m and m.group(1) == n and m.group(2) == "0" and not fail:
        return ""
    where = log.in_case()
    before = "; before that: " + fail if fail else ""
    if timed_out(rc):
        # A solution that is only slow (a sleep, a busy wait, work that grows
        # too fast) is not an endless loop.
        finished = log.finished()
        if finished:
            return ("timed out after %s s, after %d of its %s cases had finished: the solution is too slow (a sleep, a busy "
                    "wait, or work that grows too fast with n or p), or got stuck%s%s"
                    % (limit, finished, n or "?", " in '%s'" % where if where else "", before))
        return timeout_why(limit) + ("; it was running '%s'" % where if where else "") + before
    during = " during '%s'" % where if where else ""
    if rc == 0:
        why = mpi_summary(path)
        if why:
            why += during
        elif closing:
            why = "its closing line says '%s' of %s cases" % (closing, n or "?")
        elif where:
            why = "it stopped%s, with status 0 and no closing 'N passed, M failed' line" % during
        else:
            why = "status 0, but no closing 'N passed, M failed' line"
        return "the program ended before the checker finished: " + why
    if fail:
        return fail
    why = own_error(path) or log.first_collcheck()
    if why:
        return why
    why = mpi_summary(path)
    if why:
        return why + during
    return "the program ended before the checker finished: exit status %d%s" % (rc, during)


def run_why(box, path, rc, limit):
    """Why a run of collbench or tagtrain failed."""
    if box.overflow:
        return box.overflow
    if box.left:
        return left_why(box.left)
    if timed_out(rc):
        return timeout_why(limit)
    why = own_error(path) or first_match(path, r"^(collbench|tagtrain|collkit)[a-z_]*: |^# a result was wrong") \
        or mpi_summary(path)
    return why or "exit status %d: %s" % (rc, last_lines(path))


def train_why(box, path, rc, limit, ckpt, name):
    """Nothing when a tagtrain run ended well with its final checkpoint written;
    otherwise why not."""
    if box.overflow:
        return box.overflow
    if box.left:
        return left_why(box.left)
    if rc == 0:
        import os
        if os.path.isfile(ckpt):
            return ""
        return "tagtrain ended before its final checkpoint: " + (mpi_summary(path) or "no %s written" % name)
    if timed_out(rc):
        return timeout_why(limit)
    lines = read_lines(path)
    why = [l for l in lines if re.search(r"collkit watchdog: .* in '", l)][:1] \
        or [l for l in lines if re.search(r"tagtrain|collkit", l)][:2]
    return "tagtrain exit %d: %s" % (rc, clip("\n".join(why) if why else run_why(box, path, rc, limit), 400))
