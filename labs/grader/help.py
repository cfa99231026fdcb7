"""collgrade --help: the header below, then each part kind's description
(its class's HELP) and the options each kind takes."""
from . import conf
from .parts import KINDS

HEADER = """collgrade — the autograder of the collkit labs.

  collgrade LAB [--file FILE] [--json OUT] [--junit OUT] [--gradescope OUT]
                [--np-max N] [--time-limit S] [--keep] [--overwrite]
  collgrade LAB --batch DIR [--out OUT] [--regrade] [--time-limit S]
                [--canary DIR | --no-canary]

LAB is a lab folder (labs/01-ring) or its number (01). The lab's lab.conf
lists its graded parts (the kinds below); collgrade builds the student's
file with collkit-cc (the lab's own file, or --file), runs each part and
prints a score per part and in total; --json, --junit and --gradescope write
the same report for course systems and CI. An OUT file that holds something
is refused before anything is built, unless --overwrite.

Each grading is alone: a fresh work folder (removed afterwards; --keep
keeps it and prints where), the student's file copied into it under the
lab's name for it (any spelling of the original works: spaces, quotes,
unicode; the report shows the original, its control characters as \\xNN).
Every run of the student's program is ended as a whole process tree, and a
program that leaves processes behind is named for it. Where bubblewrap
(bwrap) works, the build and each run are in a sandbox of its own that
shows nothing else: the system's read-only runtime, the kit's tools,
libraries and headers read-only, the grading's program and that run's
folder; no network, its own processes, /tmp and /dev/shm (no other
checkout, submission, .git or build tree; COLLGRADE_SHOW=DIR:DIR adds
folders read-only). Without bwrap, each run is a session of its own on the
whole file system, and the grading says so. From its first collective on, a run cannot start other processes or
programs, nor, in the checker's and the benchmark's runs on host buffers, a
thread, a timer or executable memory (seccomp; COLLGRADE_CONFINE=0 leaves
that out); each file it writes stops at COLLGRADE_FSIZE_MB (1024), each
process's private memory at COLLGRADE_MEM_MB (8192), a run's processes at
once at COLLGRADE_NPROC (512: past it all are killed), the files of a
grading's runs at COLLGRADE_DISK_MB (2048); a limit reached is the run's
verdict and is named under TOTAL (LIMITS) and in the JSON ("limits"). Files
to grade over COLLGRADE_MAX_MB (256) are refused. A file that includes
anything but collkit's and the system's headers is not built. The files the verdicts read (the
checker's and the paired run's records, the cost model) leave the run as
they are written (a FIFO read outside it, kept under the work folder's
out/): the program can add to them, never rewrite them, not even at exit.
The inputs of the checker and of the paired run's timed calls come from a
seed drawn for each grading (COLLGRADE_SEED repeats one). The program, logs
and records of the last grading are copied to build/labs/LAB
(COLLGRADE_WORK sets another folder), where the handouts' commands find them.

--batch DIR grades every subfolder of DIR as one student's submission (the
lab's file(s) in it, found by name, else the only .c file), each in a
bubblewrap sandbox of its own: no network, the same view as a run's, its
own /tmp (a tmpfs of COLLGRADE_DISK_MB + 512 MB), a copy of only that
submission (its symbolic links not followed). Limits are set before the
copy: a submission over COLLGRADE_MAX_FILES files (2000) or COLLGRADE_MAX_MB
(256) is refused, the gradebook's note saying why; then time (--time-limit
per run; the whole grading 30 times that, or COLLGRADE_BATCH_LIMIT), disk,
memory (COLLGRADE_MEM_MB a process), processes (COLLGRADE_NPROC a run;
COLLGRADE_BATCH_NPROC, 2048, the user's); a limit a grading's runs reached
is named in its gradebook note. First it grades a canary, the lab's reference
solution (LAB/solution/, or --canary DIR, a submission folder): if that does
not get full marks on every part but the speed parts (which must be
measured), the grader cannot grade here, and the batch stops (exit 2)
before any student is graded (--no-canary leaves it out). It writes OUT
(default DIR.grades): gradebook.csv (every cell quoted; a cell that starts
with = + - @ is prefixed with '), ID.json and ID.txt per submission, and
Gradescope's results.json format per submission (gradescope/ID/). ID is the
folder's name when it is made of a-z 0-9 . _ - only, else that name made
safe, '+' and a hash of all its bytes: no two folders share an ID, whatever
bytes their names hold. It can be interrupted and run again: a submission
already graded is skipped unless --regrade. Without a working bwrap it
refuses (exit 2).

Grades say what they are: a grading that leaves out rank counts or parts
the lab grades (--np-max, a part blocked without a GPU, a missing tool, a
run stopped by a --time-limit below the default) is PARTIAL: the total line
says what was left out, the JSON has "partial": true, and the exit status
is 3. Rank counts left out score nothing.
Integrity points count only in proportion to the work that passes (the
check, train and save parts): an empty file or an untouched skeleton earns
(almost) none.

A lab may have several files and algorithms (file = a.c b.c, algo = x y);
a part names its algorithm with algo=NAME (default: the first); --file
then names every file, comma-separated, in that order. lab.conf is read
whole before anything is built: a line it cannot use (an unknown key, kind
or option, points or rank counts that are not whole numbers, a part named
twice, a required option missing, Windows line endings) stops collgrade
with FILE:LINE and the reason, exit 2. '#' starts a comment anywhere.
Keys: title, file, algo, from (make labNN's source of the file), allow
(names added to labs/allowed-symbols.txt for this lab's integrity part).
Time limit: every run of the student's program (each rank count of check,
each train run, the paired run, the cost model) is stopped after 90 s + 10 s
per rank and graded "timed out". A correct solution takes seconds; the
checker names a hang it can see before that (a wait: its watchdog, 20 s,
then 50 s for the other ranks), and the limit catches what it cannot, an
endless loop. --time-limit S (or COLLGRADE_TIME_LIMIT=S) sets every run's
limit to S seconds, e.g. on a slow machine; a part may set its own with
limit=S in lab.conf.
A part that needs a GPU is reported "blocked" on a machine without one and
left out of the total (the grading is then partial). Exit: 0 full marks,
1 graded below full marks, 2 bad arguments or a lab that cannot be graded,
3 partial (see above)."""


def usage_text():
    lines = [HEADER, "Parts (part NAME POINTS KIND OPTIONS in lab.conf), by KIND:"]
    for name in conf.KINDS:
        text = KINDS[name].HELP.split("\n")
        lines.append("  %-11s %s" % (name, text[0]))
        lines += ["  %-11s %s" % ("", t) for t in text[1:]]
    lines.append("Options of each kind (KEY=VALUE; every kind also takes %s):" % " ".join(conf.COMMON_TAKES))
    for name in conf.KINDS:
        needs = conf.KIND_NEEDS[name]
        lines.append("  %-11s %s%s" % (name, conf.KIND_TAKES[name] or "(none)", "; required: " + needs if needs else ""))
    return "\n".join(lines) + "\n"
