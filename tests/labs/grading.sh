#!/usr/bin/env bash
# grading.sh COLLGRADE SRC — the grader against students who want marks they
# did not earn (tests/labs/cheats/: each cheat put in front of the reference
# ring, so it does the same correct work as an honest attempt), on the small
# lab tests/labs/tiny: every cheat scores at most what the honest ring scores
# and its integrity part names what it used; the reference still scores full
# marks under a file name of any spelling; two gradings in a row share
# nothing; --np-max gives a partial grade (exit 3, "partial": true); an empty
# file earns nothing; a program that forks is named for it and leaves no
# process behind; a program that writes outside its folder changes nothing
# there (where bubblewrap works).
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
check '[ $rc = 0 ] && [ "$honest" = 100.0 ]' "the reference ring under an odd name: exit $rc, total '$honest'"
check 'grep -qF "$odd" <<<"$out"' "the report does not show the original file name"
check '[ ! -e x ] && [ ! -e "$T/in/x" ]' "a file name was run as a command"

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
cheat proc    "open.*read|read.*open"
cheat thread  "pthread_create"
cheat syscall "(syscall|svc).*a system call written as an instruction"
cheat wtime   "MPI_Wtime \\(MPI\\)"
# Two gradings in a row share nothing: the reference right after MPI_Wtime.
grade "$SOL" > /dev/null
check 'grep -qE "integrity +20.0 / 20" <<<"$out"' "the grading after a file that used MPI_Wtime: $(grep integrity <<<"$out")"
# Writes outside its folder: the witness and the lab's lab.conf untouched.
cp "$T/lab/lab.conf" "$T/lab.conf.orig"
cheat outside "fopen" GRADE_TEST_OUTSIDE="$T/witness" GRADE_TEST_CONF="$T/lab/lab.conf"
if [ $sandbox = 1 ]; then
  check '[ ! -e "$T/witness" ] && cmp -s "$T/lab/lab.conf" "$T/lab.conf.orig"' "a run wrote outside its folder"
fi
cp "$T/lab.conf.orig" "$T/lab/lab.conf"
# A program that forks: named for it, and nothing of it left running.
cheat forker "fork" COLLGRADE_TIME_LIMIT=8
check 'grep -qE "left [0-9]+ process\\(es\\) behind" <<<"$out"' "the forking program is not named for the processes it left"
check '! grep -q "too slow" <<<"$out"' "the forking program is called slow"
check '[ "$(left_marks)" = 0 ]' "processes of the gradings are still running: $(left_marks)"

# A forged verdict: no work, the closing line printed by the file itself.
make_cheat forger "$T/forger/my_ring.c"
grade "$T/forger/my_ring.c" > /dev/null
check '[ "$total" = 0.0 ]' "the forger scores $total"
# An empty file: nothing to be honest about, no integrity points.
make_cheat empty "$T/empty/my_ring.c"
grade "$T/empty/my_ring.c" > /dev/null
check '[ "$total" = 0.0 ] && grep -qE "integrity +0.0 / 20" <<<"$out"' "an empty file scores $total: $(grep integrity <<<"$out")"
# --np-max leaves rank counts out: partial, in the text, the JSON and the exit status.
grade "$SRC/labs/01-ring/skeleton/my_ring.c" --np-max 1 > /dev/null
check '[ $rc = 3 ]' "--np-max 1: exit $rc, expected 3 (partial)"
check 'grep -qE "TOTAL .*PARTIAL: rank counts above --np-max 1 not run" <<<"$out"' "--np-max 1: the total is not marked partial"
check 'grep -qE "correctness +30.0 / 60 .*p = 2 not run \\(--np-max 1\\)" <<<"$out"' "--np-max 1: rank counts left out did not score 0"
check 'grep -q "\"partial\": true" "$T/r.json"' "--np-max 1: the JSON lacks \"partial\": true"
check 'le "$total" 40' "--np-max 1: the skeleton scores $total"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
