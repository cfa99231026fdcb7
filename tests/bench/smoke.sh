#!/usr/bin/env bash
# smoke.sh SRC BUILD — `make bench` end to end at its smallest (BENCH=smoke:
# p = 2, both transports, traces, the model, the trainer for one epoch and
# replicated against --zero 1 and --zero 2 (zero.csv), the
# summary and the plots), so that no step of the script rots unseen: it must
# exit 0 with every step's results in the folder; a step that fails (here: a
# trainer algorithm that does not exist) must make it exit 1 and say which,
# with the rest still written; a results folder that exists is refused.
set -u
SRC=$1 BUILD=$2
# The trainer step trains on the real data: without it, skip (exit 77).
. "$(dirname "$0")/../lib/need_data.sh"
COLLKIT_SOURCE_DIR=${COLLKIT_SOURCE_DIR:-$SRC} skip_without_data
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
num='[0-9.]+(e[-+]?[0-9]+)?'

BENCH=smoke BENCH_OUT=$d/out "$SRC/scripts/bench.sh" "$BUILD" > "$d/log" 2>&1
rc=$?
[ $rc = 0 ] && ok || { bad "bench.sh BENCH=smoke exited $rc"; cat "$d/log"; }
o=$d/out
grep -q '^alpha_us ' "$o/params.txt" 2>/dev/null && ok || bad "no params.txt"
grep -Eq "^ring,2,[0-9]+," "$o/sweep.csv" 2>/dev/null && ok || bad "no ring rows at p = 2 in sweep.csv"
if grep -q "transport shm" "$o/pingpong_shm.txt" 2>/dev/null; then
  grep -Eq "^twoshot@shm,2,[0-9]+," "$o/sweep.csv" && ok || bad "no twoshot@shm rows in sweep.csv"
fi
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$o/trace_ring_pipelined.json" 2>/dev/null && ok ||
  bad "trace_ring_pipelined.json is not JSON"
grep -Eq "^ring,4096," "$o/extrap.csv" 2>/dev/null && ok || bad "no extrapolation to 4096 ranks"
# (the efficiency is any positive number: on a machine whose memory speed
# changes from run to run, a 1-rank run can be the slower one, and it exceeds 1)
for a in ring twoshot@shm; do
  grep -Eq "^$a,2,$num,$num,$num,33557008$" "$o/trainer.csv" 2>/dev/null && ok || bad "no $a row at p = 2 in trainer.csv"
done
grep -q "efficiency ceiling" "$o/trainer_ceiling.txt" 2>/dev/null && ok || bad "no trainer_ceiling.txt"
# Sharded training: a row per mode; --zero 2 holds half the gradients of --zero 1 at p = 2.
awk -F, 'NR > 1 && NF == 11 { g[$1] = $7; r[$1] = $9; m[$1] = $10 } END { exit !(g["replicated"] > 0 &&
         g["zero1"] == g["replicated"] && g["zero2"] == 4 * int((g["zero1"] / 4 + 1) / 2) && r["zero2"] > 0 &&
         m["zero1"] >= g["zero1"] && m["zero2"] >= g["zero2"] && m["zero2"] < g["zero1"]) }' "$o/zero.csv" 2>/dev/null && ok ||
  bad "zero.csv: want replicated, zero1 and zero2 rows, zero2 holding half the gradients: $(cat "$o/zero.csv" 2>&1)"
grep -q '^## Sharded training' "$o/summary.md" 2>/dev/null && ok || bad "summary.md has no sharded training section"
grep -q '^## Trainer' "$o/summary.md" 2>/dev/null && ok || bad "summary.md has no trainer section"
if command -v gnuplot > /dev/null; then
  for f in busbw_p2 pingpong trainer_scaling; do [ -s "$o/$f.png" ] && ok || bad "no $f.png"; done
fi
[ ! -e "$o/gnuplot.log" ] && ok || { bad "gnuplot complained:"; cat "$o/gnuplot.log"; }

# A step that fails: named, exit 1, the rest written.
BENCH=smoke BENCH_OUT=$d/out2 TRAINER_ALGOS="ring nosuch" "$SRC/scripts/bench.sh" "$BUILD" > "$d/log2" 2>&1
rc=$?
[ $rc = 1 ] && ok || bad "a failed trainer run: exit $rc (want 1)"
grep -q "bench: 1 step(s) failed" "$d/log2" && grep -q "p=2 nosuch" "$d/log2" && ok || { bad "the failure is not named"; tail -8 "$d/log2"; }
grep -Eq "^ring,2,$num," "$d/out2/trainer.csv" 2>/dev/null && [ -s "$d/out2/summary.md" ] && ok || bad "the rest was not written"

# A folder that exists is never written over.
BENCH=smoke BENCH_OUT=$d/out "$SRC/scripts/bench.sh" "$BUILD" > "$d/log3" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "BENCH_OUT=$d/out exists" "$d/log3" && ok || { bad "an existing BENCH_OUT: exit $rc"; cat "$d/log3"; }
echo "$pass passed, $fail failed"
[ $fail = 0 ]
