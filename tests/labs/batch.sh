#!/usr/bin/env bash
# batch.sh COLLGRADE SRC — collgrade --batch on 31 generated submissions
# (reference rings under several names, skeletons, cheats from
# tests/labs/cheats, one that crashes, one that loops, one that forks, one that
# forges its verdict, one that writes outside its folder, two folders whose
# names read the same once made safe, names with spaces and quotes, one with
# no file, one with two, one whose file is a link to the reference): a complete gradebook with the right score for each,
# every report and Gradescope results.json well formed, nothing left running,
# nothing outside each submission's copy changed, and a second run that
# grades only what is missing. Skips (77) where bubblewrap cannot run.
set -u
G=$1 SRC=$2
. "$(dirname "$0")/sandbox_lib.sh"
export GRADE_MARK="collgrade-batch-$$-$RANDOM"
# The batch's own lab, with its reference solution (sandbox_lib.sh).
batch_lab
make_cheat() { "$SRC/tests/labs/cheats/assemble.sh" "$SRC" "$@"; }
declare -A want   # submission folder -> expected score
sub() {   # sub FOLDER SCORE SOURCE [FILE NAME]: one submission
  mkdir -p "$T/subs/$1"
  case $3 in SOL) cp "$SOL" "$T/subs/$1/${4:-my_ring.c}" ;; SKEL) cp "$SKEL" "$T/subs/$1/${4:-my_ring.c}" ;;
    *) make_cheat "$3" "$T/subs/$1/${4:-my_ring.c}" ;; esac
  want[$1]=$2
}
# Honest work: 60 + 20; the skeleton passes p = 1 only: 30 + 20 x 30/60; a
# cheat with the same work loses integrity (60), or everything when what it
# used could do the work (0); no work: 0.
sub alice 80.0 SOL
sub "bob smith" 80.0 SOL "good ring.c"
sub "o'brien" 80.0 SOL "my_ring (1).c"
sub 'quote"d' 80.0 SOL "it's \"mine\".c"
sub "a b" 80.0 SOL
sub "a_b" 80.0 SOL
sub "zoë" 80.0 SOL
sub "same-name-1" 80.0 SOL
sub "same-name-2" 40.0 SKEL
for i in 1 2 3; do sub "skel$i" 40.0 SKEL; done
# what can do or fake the work (MPI, the library's algorithms, dl*, threads,
# raw system calls, fork) voids it: 0; files only cost the integrity points: 60
for c in dlphdr engine thread syscall wtime; do sub "cheat-$c" 0.0 "$c"; done
for c in proc outside; do sub "cheat-$c" 60.0 "$c"; done
sub forker 0.0 forker   # confined: its fork fails, and fork voids the work
sub forger 0.0 forger
sub crasher 0.0 crasher
sub looper 0.0 looper
sub empty 0.0 empty
mkdir -p "$T/subs/nofile"; echo "no code" > "$T/subs/nofile/README.txt"; want[nofile]=0.0   # out of 80, partial
mkdir -p "$T/subs/twofiles"; cp "$SOL" "$T/subs/twofiles/a.c"; cp "$SOL" "$T/subs/twofiles/b.c"; want[twofiles]=0.0
# A link to the reference instead of a file: not followed, graded nothing.
mkdir -p "$T/subs/linked"; ln -s "$SOL" "$T/subs/linked/my_ring.c"; want[linked]=0.0
sub late1 80.0 SOL
sub late2 40.0 SKEL
sub late3 80.0 SOL "ring.c"
sub late4 80.0 SOL "ανέλιξη.c"
n=${#want[@]}
check '[ $n = 31 ]' "$n submissions generated, not 31"
snap() { (cd "$T" && find subs lab -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum); }
snap > "$T/before"
export GRADE_TEST_OUTSIDE=$T/witness GRADE_TEST_CONF=$T/lab/lab.conf
out=$("$G" "$T/lab" --batch "$T/subs" --out "$T/grades" --time-limit 8 2>&1); rc=$?
echo "$out"
check '[ $rc = 0 ]' "collgrade --batch: exit $rc"
check 'grep -q "linked: 0.0 / 80 (partial: my_ring.c is a symbolic link" <<<"$out"' "the linked submission is not refused for its link"
book=$T/grades/gradebook.csv
check '[ $(($(wc -l < "$book") - 1)) = 31 ]' "the gradebook has $(($(wc -l < "$book") - 1)) rows, not 31"
for s in "${!want[@]}"; do
  q=$(printf '%s' "$s" | sed 's/"/""/g')
  got=$(grep -F "\"$q\"," "$book" | head -1 | awk -F'",' '{ print $NF }' | cut -d, -f2)
  check '[ "$got" = "${want[$s]}" ]' "submission '$s': score '$got', expected ${want[$s]}"
done
check 'grep -q "\[31/31\]" <<<"$out"' "no progress line for the last submission"
check '[ ! -e "$T/witness" ]' "a submission wrote outside its folder"
snap > "$T/after"
check 'cmp -s "$T/before" "$T/after"' "files outside the graded copies changed: $(diff "$T/before" "$T/after" | head -3)"
nleft=0
for f in /proc/[0-9]*/environ; do p=${f#/proc/}; p=${p%/environ}
  [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] || ! grep -qzx "GRADE_MARK=$GRADE_MARK" "$f" 2>/dev/null || nleft=$((nleft + 1)); done
check '[ $nleft = 0 ]' "$nleft processes of the batch still running"
if command -v python3 > /dev/null; then
  python3 - "$T/grades" <<'PY' && pass=$((pass + 1)) || { echo "FAIL: a report or results.json is malformed"; fail=$((fail + 1)); }
import json, os, sys
d = sys.argv[1]
js = [f for f in os.listdir(d + "/students") if f.endswith(".json")]
assert len(js) == 31, len(js)
for f in js:
    r = json.load(open(os.path.join(d, "students", f)))
    assert "total" in r and "partial" in r
gs = os.listdir(d + "/gradescope")
assert len(gs) == 31, len(gs)
for g in gs:
    r = json.load(open(os.path.join(d, "gradescope", g, "results.json")))
    assert isinstance(r["score"], (int, float)) and isinstance(r["tests"], list)
    for t in r["tests"]:
        assert {"name", "score", "max_score", "status", "output"} <= set(t), t
PY
fi
# Resumed: only the submission whose report is gone is graded again.
rm -f "$T/grades/students/alice.json"
out=$("$G" "$T/lab" --batch "$T/subs" --out "$T/grades" --time-limit 8 2>&1); rc=$?
check '[ $rc = 0 ] && [ $(grep -c "already graded" <<<"$out") = 30 ] && grep -q "alice: 80.0 / 80" <<<"$out"' "the second run did not grade only alice: $out"
check '[ $(($(wc -l < "$book") - 1)) = 31 ]' "the resumed gradebook is not complete"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
