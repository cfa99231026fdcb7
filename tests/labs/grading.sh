#!/usr/bin/env bash
# grading.sh COLLGRADE SRC — the grader against students who want marks they
# did not earn (tests/labs/cheats/: each cheat put in front of the reference
# ring, so it does the same correct work as an honest attempt), on the small
# lab tests/labs/tiny: every cheat scores at most what the honest ring scores
# and its integrity part names what it used; the reference still scores full
# marks under a file name of any spelling; two gradings in a row share
# nothing; --np-max gives a partial grade (exit 3, "partial": true); an empty
# file earns nothing; a program cannot fork (confined), and where it is not
# confined is named for it and leaves no process behind; a program that writes outside its folder changes nothing
# there (where bubblewrap works); lab 02's message checks cannot be escaped by
# deleting or rewriting the descriptor's formulas; a file that includes what is
# not a header is not built; output and memory without end are bounded; lab
# 06's saver cannot learn where it will be crashed; lab 03's checks are not
# passed by a lab 01 ring under their names.
set -u
G=$1 SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export GRADE_MARK="collgrade-test-$$-$RANDOM"   # every process of these gradings carries it
export COLLGRADE_WORK=$T/keep
cp -R "$SRC/tests/labs/tiny" "$T/lab"
SOL=$SRC/labs/01-ring/solution/my_ring.c
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
make_cheat() { "$SRC/tests/labs/cheats/assemble.sh" "$SRC" "$@"; }
# grade FILE [ARGS]: $out, $rc, $total (of the report's TOTAL line), JSON in $T/r.json
grade() {
  local f=$1; shift
  rm -f "$T/r.json"
  out=$("$G" "$T/lab" --file "$f" --json "$T/r.json" "$@" 2>&1); rc=$?
  total=$(sed -n 's/^  TOTAL *\([0-9.]*\) \/ .*/\1/p' <<<"$out")
  echo "$out"
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
# left_marks: the processes that carry this test's mark, but this shell and its subshell
left_marks() {
  local n=0 f p
  for f in /proc/[0-9]*/environ; do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] || ! grep -qzx "GRADE_MARK=$GRADE_MARK" "$f" 2>/dev/null || n=$((n + 1))
  done
  echo $n
}
sandbox=0; [ "${COLLGRADE_SANDBOX:-}" != none ] && bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-net true 2>/dev/null && sandbox=1

# The honest attempt: full marks, under an odd name (spaces, quotes, ';',
# '$(...)', unicode), which the report shows as given.
odd="$T/in/my ring (1) ;\$(touch x) \"q\" 'é.c"
mkdir -p "$T/in"; cp "$SOL" "$odd"
grade "$odd"
honest=$total
seed1=$(sed -n "s/.*the checker's inputs from seed \([0-9]*\)$/\1/p" <<<"$out")
check '[ $rc = 0 ] && [ "$honest" = 100.0 ]' "the reference ring under an odd name: exit $rc, total '$honest'"
check 'grep -qF "$odd" <<<"$out"' "the report does not show the original file name"
check '[ ! -e x ] && [ ! -e "$T/in/x" ]' "a file name was run as a command"
# The timed calls' inputs are the grading's own too, not a fixed set a table
# of answers could hold (the records the verdict read are kept with the logs).
check 'grep -q "^collkit-results 1 paired .* seed=$seed1 " "$COLLGRADE_WORK/logs/paired.results"' \
  "the paired run did not use the grading's seed $seed1: $(head -1 "$COLLGRADE_WORK/logs/paired.results" 2>&1)"

# Each cheat: integrity 0, what it used named, no more than the honest total.
cheat() {   # cheat NAME REGEX [ENV...]
  local name=$1 re=$2; shift 2
  make_cheat "$name" "$T/$name/my_ring.c"
  rm -f "$T/r.json"   # each grading's own report (an existing one is refused)
  env "$@" "$G" "$T/lab" --file "$T/$name/my_ring.c" --json "$T/r.json" > "$T/$name.out" 2>&1; rc=$?
  out=$(cat "$T/$name.out"); total=$(sed -n 's/^  TOTAL *\([0-9.]*\) \/ .*/\1/p' <<<"$out")
  echo "$out"
  check 'grep -qE "integrity +0.0 / 20 +the file uses what this lab forbids: .*$re" <<<"$out"' "cheat $name: integrity not 0 or '$re' not named"
  check '[ -n "$total" ] && le "$total" "$honest"' "cheat $name: total '$total' above the honest $honest"
}
cheat dlphdr  "dl_iterate_phdr.*dlsym|dlsym.*dl_iterate_phdr"
cheat engine  "ck_algo_ring.*ck_trees_allreduce|ck_trees_allreduce.*ck_algo_ring"
# the library's algorithms do the work: every part that ran the program is void
check '[ "$total" = 0.0 ] && grep -qE "correctness +0.0 / 60 +void \(60.0 / 60 as run\): the file uses what can do or fake this work" <<<"$out"' \
  "the engine cheat's work is not void: total $total"
cheat proc    "open.*read|read.*open"
# files only cost the integrity points: its honest work still counts
check '[ "$total" != 0.0 ] && ! grep -q "void" <<<"$out"' "the proc cheat's work was voided: total $total"
cheat thread  "pthread_create"
# ... and, confined, its thread never ran (in no run of the checker or the benchmark)
check '! grep -rq "the spinner thread is running" "$COLLGRADE_WORK/logs"' "a confined run started a thread"
cheat syscall "(syscall|svc).*a system call written as an instruction"
cheat wtime   "MPI_Wtime \\(MPI\\)"
cheat startup "constructor"
# Code run at load time without a constructor (a GNU indirect function's
# resolver), and code made at run time (memory mapped executable): void.
cheat ifunc   "indirect function\(s\) twice"
check '[ "$total" = 0.0 ]' "the ifunc cheat's work is not void: total $total"
cheat jit     "mmap \(memory mapped or made executable"
check '[ "$total" = 0.0 ]' "the jit cheat's work is not void: total $total"
check '! grep -rq "machine code written at run time ran" "$COLLGRADE_WORK/logs"' "a confined run executed code it wrote"
# Machine code on a stack the file made executable (no call a filter sees): void.
cheat xstack  "an executable stack \(a .note.GNU-stack section flagged x"
check '[ "$total" = 0.0 ]' "the xstack cheat's work is not void: total $total"
# A timer's signal handler runs inside the library's timed calls too: void.
cheat alarm   "setitimer signal \(signals\)|signal setitimer \(signals\)"
check '[ "$total" = 0.0 ]' "the alarm cheat's work is not void: total $total"
check '! grep -rq "a timer.s handler ran" "$COLLGRADE_WORK/logs"' "a confined run had a timer"
# Records rewritten at exit (faster times): the exit handler voids the work,
# and the records had left the program's reach as they were written, so not
# even the score as run shows the forged speed.
cheat tamper  "atexit \(code that runs after the checker" COLLGRADE_TIME_LIMIT=8
check '[ "$total" = 0.0 ] && ! grep -E "^  performance " <<<"$out" | grep -q "speed"' \
  "the rewritten records reached the verdict: $(grep -E '^  performance ' <<<"$out")"
# The grader's own secrets: a run reads the reference solution (fopen), a
# build embeds it (.incbin). Where bubblewrap works, both see an empty folder:
# its text is in no log (and so in no verdict).
secret="the reference solution (instructors only"
cheat peek "fopen" GRADE_TEST_SECRET="$SOL"
if [ $sandbox = 1 ]; then
  check '! grep -rqF "$secret" "$COLLGRADE_WORK/logs"' "a run read the reference solution"
fi
mkdir -p "$T/embed"
{ printf '#include <stdio.h>\n'
  printf '__asm__(".section .rodata\\n.globl embedded\\nembedded: .incbin \\"%s\\"\\n.byte 0\\n.previous");\n' "$SOL"
  printf 'extern const char embedded[];\n'
  sed 's/^    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);$/    fprintf(stderr, "%s\\n", embedded);\n&/' "$SOL"; } > "$T/embed/my_ring.c"
grade "$T/embed/my_ring.c" > /dev/null
if [ $sandbox = 1 ]; then
  check '[ "$total" = 0.0 ] && grep -q "does not build" <<<"$out" && ! grep -rqF "$secret" "$COLLGRADE_WORK/logs"' \
    "a build embedded the reference solution: total $total"
fi
# Settings written through ck_comm_config's pointer: a copy, so nothing
# changes (ck_comm_config is allowed: nothing to name, nothing gained).
make_cheat config "$T/config/my_ring.c"
grade "$T/config/my_ring.c" > /dev/null
check 'grep -qE "correctness +60.0 / 60" <<<"$out" && le "$total" "$honest"' "writing ck_comm_config's copy: total $total, honest $honest"
# Two gradings in a row share nothing: the reference right after MPI_Wtime.
grade "$SOL" > /dev/null
check 'grep -qE "integrity +20.0 / 20" <<<"$out"' "the grading after a file that used MPI_Wtime: $(grep integrity <<<"$out")"
# ... not even the checker's inputs: each grading draws its own seed.
seed2=$(sed -n "s/.*the checker's inputs from seed \([0-9]*\)$/\1/p" <<<"$out")
check '[ -n "$seed1" ] && [ -n "$seed2" ] && [ "$seed1" != "$seed2" ]' "two gradings had the inputs of seeds '$seed1' and '$seed2'"
# Writes outside its folder: the witness and the lab's lab.conf untouched.
cp "$T/lab/lab.conf" "$T/lab.conf.orig"
cheat outside "fopen" GRADE_TEST_OUTSIDE="$T/witness" GRADE_TEST_CONF="$T/lab/lab.conf"
if [ $sandbox = 1 ]; then
  check '[ ! -e "$T/witness" ] && cmp -s "$T/lab/lab.conf" "$T/lab.conf.orig"' "a run wrote outside its folder"
fi
cp "$T/lab.conf.orig" "$T/lab/lab.conf"
# A program that forks: named for it, and nothing of it left running.
# Confined (the default): its fork fails, nothing is left; fork could do the
# work, so what passed is void (its score as run shown).
cheat forker "fork" COLLGRADE_TIME_LIMIT=8
check 'grep -qE "correctness +0.0 / 60 +void \(60.0 / 60 as run\)" <<<"$out"' "the confined forker's work is not void as run 60"
check '[ "$(left_marks)" = 0 ]' "processes of the confined grading are still running: $(left_marks)"
# Not confined (COLLGRADE_CONFINE=0, or a system without seccomp): the
# processes it leaves are named and ended.
cheat forker "fork" COLLGRADE_TIME_LIMIT=8 COLLGRADE_CONFINE=0
check 'grep -qE "left [0-9]+ process\\(es\\) behind" <<<"$out"' "the forking program is not named for the processes it left"
check '! grep -q "too slow" <<<"$out"' "the forking program is called slow"
check '[ "$(left_marks)" = 0 ]' "processes of the gradings are still running: $(left_marks)"

# Files that #include what is not a header: the reference itself (by a path
# from a folder the build searches) and a system file, whose text the
# compiler's messages would show. Nothing is built; the report names it.
mkdir -p "$T/inc"
printf '#include "../labs/01-ring/solution/my_ring.c"\n' > "$T/inc/my_ring.c"
grade "$T/inc/my_ring.c" > /dev/null
check '[ "$total" = 0.0 ] && grep -qE "does not build: it includes .*labs/01-ring/solution/my_ring.c" <<<"$out"' "a file that includes the reference scores $total"
{ printf '#include "/etc/hostname"\n'; cat "$SOL"; } > "$T/inc/my_ring.c"
grade "$T/inc/my_ring.c" > /dev/null
check '[ "$total" = 0.0 ] && grep -q "it includes /etc/hostname: a file may include" <<<"$out"' "a file that includes /etc/hostname scores $total"
# Output without end: cut at COLLGRADE_FSIZE_MB and named for it; memory
# without end: stopped at COLLGRADE_MEM_MB (the allocation fails), not by
# the machine. (Below the default time limit, so partial.)
make_cheat chatter "$T/chatter/my_ring.c"
out=$(COLLGRADE_FSIZE_MB=5 COLLGRADE_TIME_LIMIT=8 "$G" "$T/lab" --file "$T/chatter/my_ring.c" 2>&1); echo "$out"
check 'grep -qE "TOTAL +0.0 / 100" <<<"$out" && grep -q "output reached 5 MB (COLLGRADE_FSIZE_MB) and was cut there" <<<"$out"' "the chatter is not named for its output"
make_cheat hog "$T/hog/my_ring.c"
out=$(COLLGRADE_MEM_MB=1024 COLLGRADE_TIME_LIMIT=30 "$G" "$T/lab" --file "$T/hog/my_ring.c" 2>&1); echo "$out"
if grep -q 'sanitize "-f' "$(dirname "$G")/../collkit-plugin-env.cmake" 2>/dev/null; then :   # no memory limit there
else check 'grep -qE "TOTAL +0.0 / 100" <<<"$out" && grep -q "killed by signal 6" <<<"$out"' "the memory hog is not stopped by its limit"; fi
# A forged verdict: no work, the closing line printed by the file itself.
make_cheat forger "$T/forger/my_ring.c"
grade "$T/forger/my_ring.c" > /dev/null
check '[ "$total" = 0.0 ]' "the forger scores $total"
# The checker's own functions (linked into every program) give any call's
# exact result: no communication at all. The library's internals, whatever
# their prefix: void.
make_cheat oracle "$T/oracle/my_ring.c"
grade "$T/oracle/my_ring.c" > /dev/null
check '[ "$total" = 0.0 ] && grep -qE "integrity +0.0 / 20 .*cc_coll_expected cc_coll_input \(the library.s internals\)" <<<"$out"' \
  "asking the checker for the result scores $total: $(grep integrity <<<"$out")"
# A cost function is the file's own code too, run where no collective came
# before it (collbench --extrapolate): confined all the same.
mkdir -p "$T/costlab"
printf 'title = a cost part only\nfile = my_ring.c\nalgo = my_ring\npart model 20 cost ref=ring\n' > "$T/costlab/lab.conf"
out=$("$G" "$T/costlab" --file "$SRC/tests/labs/cheats/costly.c" 2>&1); echo "$out"
check 'grep -qE "^  model " <<<"$out" && [ -f "$COLLGRADE_WORK/logs/log.cost" ]' "the cost part did not run"
check '! grep -rq "a cost function mapped executable memory" "$COLLGRADE_WORK/logs"' "a cost function ran unconfined"
# An empty file: nothing to be honest about, no integrity points.
make_cheat empty "$T/empty/my_ring.c"
grade "$T/empty/my_ring.c" > /dev/null
check '[ "$total" = 0.0 ] && grep -qE "integrity +0.0 / 20" <<<"$out"' "an empty file scores $total: $(grep integrity <<<"$out")"
# Lab 02's message checks are against its schedule, not the file's
# descriptor: a ring padded with empty messages, its per-message formulas
# deleted, and one whose "given" message count was changed to what it sends
# both fail (lab 02's own lab.conf, at p = 3 only, without its speed part).
mkdir -p "$T/lab02"
sed -e '/^part performance/d' -e 's/^\(part correctness .* np=\)[0-9,]*/\13/' "$SRC/labs/02-pipeline/lab.conf" > "$T/lab02/lab.conf"
out=$("$G" "$T/lab02" --file "$SRC/tests/labs/padded_pipe.c" 2>&1); echo "$out"
check 'grep -qE "correctness +0.0 / 60 .*pipelined_rs sends [0-9]+ \(padded\)" <<<"$out"' "lab 02: a padded ring without max_msg_bytes passes"
out=$("$G" "$T/lab02" --file "$SRC/tests/labs/recounted_pipe.c" 2>&1); echo "$out"
check 'grep -qE "correctness +0.0 / 60 .*messages: rank [0-9] sent [0-9]+, pipelined_rs says [0-9]+" <<<"$out"' "lab 02: a ring with its message count rewritten passes"
out=$("$G" "$T/lab02" --file "$SRC/labs/02-pipeline/solution/my_pipe.c" 2>&1); echo "$out"
check 'grep -qE "correctness +60.0 / 60" <<<"$out"' "lab 02: the reference does not pass its message checks"
# Lab 06: a save that learns its crash point (tests/labs/peeking_save.c: the
# harness's record in its memory, its own, its parent's and its tracer's
# command lines and environments under /proc) and makes that many harmless
# calls first. When the saver was a forked child of the harness it found K
# and scored 55.0 (crash 35, faults 20); now it finds nothing and scores the
# skeleton's work, 5.0 (the edge cases; no integrity: it reads files).
out=$("$G" "$SRC/labs/06-faults" --file "$SRC/tests/labs/peeking_save.c" 2>&1); echo "$out"
total=$(sed -n 's/^  TOTAL *\([0-9.]*\) \/ .*/\1/p' <<<"$out")
check 'grep -qE "crash +0.0 / 35" <<<"$out" && grep -qE "faults +5.0 / 20" <<<"$out" && [ -n "$total" ] && le "$total" 5.0' \
  "lab 06: the save that looks for its crash point scores $total: $(grep -E '^  (crash|faults) ' <<<"$out")"
check 'grep -qE "integrity +0.0 / 10 .*open of /proc" <<<"$out"' "lab 06: the peeking save's opens of /proc are not named"
# Lab 03: the student's lab 01 ring renamed my_rd and my_tree. Its check parts
# pin the library's rd and tree traffic (verify=--traffic+rd, +tree): the
# ring passes p = 1 only, as the skeleton does (before the pins: 79.2, both
# check parts in full and the speed parts measured).
mkdir -p "$T/lab03"
sed 's/my_ring/my_rd/g' "$SOL" > "$T/lab03/my_rd.c"; sed 's/my_ring/my_tree/g' "$SOL" > "$T/lab03/my_tree.c"
out=$("$G" "$SRC/labs/03-latency" --file "$T/lab03/my_rd.c,$T/lab03/my_tree.c" 2>&1); echo "$out"
total=$(sed -n 's/^  TOTAL *\([0-9.]*\) \/ .*/\1/p' <<<"$out")
check 'grep -qE "rd_correct +3.1 / 25 +my_rd: 1 of 8 rank counts pass.*rd says" <<<"$out" && grep -qE "tree_correct +4.2 / 25 +my_tree: 1 of 6 rank counts pass.*tree says" <<<"$out" && [ -n "$total" ] && le "$total" 17' \
  "lab 03: the renamed lab 01 ring scores $total: $(grep -E '^  (rd|tree)_correct ' <<<"$out")"
# --np-max leaves rank counts out: partial, in the text, the JSON and the exit status.
grade "$SRC/labs/01-ring/skeleton/my_ring.c" --np-max 1 > /dev/null
check '[ $rc = 3 ]' "--np-max 1: exit $rc, expected 3 (partial)"
check 'grep -qE "TOTAL .*PARTIAL: rank counts above --np-max 1 not run" <<<"$out"' "--np-max 1: the total is not marked partial"
check 'grep -qE "correctness +30.0 / 60 .*p = 2 not run \\(--np-max 1\\)" <<<"$out"' "--np-max 1: rank counts left out did not score 0"
check 'grep -q "\"partial\": true" "$T/r.json"' "--np-max 1: the JSON lacks \"partial\": true"
check 'le "$total" 40' "--np-max 1: the skeleton scores $total"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
