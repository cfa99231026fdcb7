#!/usr/bin/env bash
# gantt_pp.sh BINDIR MPIRUN [FLAGS...] — a tagtrain --pp 2 --microbatches 4 step traced
# under each schedule and drawn: the trace holds each stage's forwards and backwards in
# the schedule's order (GPipe: F0..F3 B3..B0 on both stages; 1F1B: stage 0 F0 F1 B0 F2 B1
# F3 B2 B3, stage 1 F0 B0 F1 B1 ...), and the Gantt has one bar per event of the step,
# one row group per stage, numbered with the micro-batch, a legend naming forward and
# backward and a subtitle saying what the numbers are. (Proven able to fail: the two
# expected orders swapped, both checks of the order fail.)
set -u
BIN=$1; shift
W=$(mktemp -d /tmp/collkit_gantt_pp.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$BIN/tagsynth" --rows 128 --out "$W/d.csv" > /dev/null && "$BIN/tagsynth" --rows 32 --seed 2 --out "$W/h.csv" > /dev/null ||
  fail "tagsynth"
# order TRACE STAGE: the stage's operations of step 1, in the order it ran them
order() { grep '"call":1}' "$1" | grep "\"pid\":$2," | grep -o '"cat":"\(fwd\|bwd\)"[^}]*"step":[0-9]*' |
          sed 's/"cat":"fwd".*"step":/F/; s/"cat":"bwd".*"step":/B/' | tr '\n' ' '; }
for s in gpipe 1f1b; do
  "$@" -np 2 "$BIN/tagtrain" --data "$W/d.csv" --holdout "$W/h.csv" --epochs 1 --no-save --quiet --features 256 \
    --hidden 32,32,32 --pp 2 --microbatches 4 --pp-schedule $s --trace "$W/$s.json" > "$W/$s.log" 2>&1 ||
    { cat "$W/$s.log"; fail "tagtrain --pp 2 --pp-schedule $s --trace"; }
  "$BIN/colldraw" --gantt "$W/$s.json" --call 1 --out "$W/g-$s" > /dev/null || fail "colldraw --gantt ($s): exit $?"
  svg=$W/g-$s/gantt.svg
  got=$(grep -o 'class="ev"' "$svg" | wc -l)
  [ "$got" = 16 ] || fail "$s: $got bars for the 16 forwards and backwards of step 1"
  [ "$(grep -o '>rank [0-9]*</text>' "$svg" | sort -u | wc -l)" = 2 ] || fail "$s: not one row group per stage"
  grep -q '>forward (F k)</text>' "$svg" && grep -q '>backward (B k)</text>' "$svg" || fail "$s: the legend lacks forward and backward"
  grep -q 'the numbers in the bars are micro-batches' "$svg" || fail "$s: the subtitle does not say what the numbers are"
done
[ "$(order "$W/gpipe.json" 0)" = "F0 F1 F2 F3 B3 B2 B1 B0 " ] && [ "$(order "$W/gpipe.json" 1)" = "F0 F1 F2 F3 B3 B2 B1 B0 " ] ||
  fail "GPipe's order: stage 0 $(order "$W/gpipe.json" 0), stage 1 $(order "$W/gpipe.json" 1)"
[ "$(order "$W/1f1b.json" 0)" = "F0 F1 B0 F2 B1 F3 B2 B3 " ] && [ "$(order "$W/1f1b.json" 1)" = "F0 B0 F1 B1 F2 B2 F3 B3 " ] ||
  fail "1F1B's order: stage 0 $(order "$W/1f1b.json" 0), stage 1 $(order "$W/1f1b.json" 1)"
"$@" -np 2 "$BIN/tagtrain" --data "$W/d.csv" --holdout "$W/h.csv" --epochs 1 --no-save --quiet --features 256 \
  --hidden 32,32,32 --tp 2 --tp-algo ring --trace "$W/tp.json" > "$W/tp.log" 2>&1 || { cat "$W/tp.log"; fail "tagtrain --tp 2 --trace"; }
n=$(for c in 0 1 2; do grep '"cat":"tp"' "$W/tp.json" | grep -c "\"call\":$c}"; done | sort -u)
[ "$(echo "$n" | wc -l)" = 1 ] && [ "$n" -ge 2 ] || fail "--tp: all-reduces per step $(echo $n): not the same two or more in every step"
"$BIN/colldraw" --gantt "$W/tp.json" --call 1 --out "$W/g-tp" > /dev/null || fail "colldraw --gantt (--tp): exit $?"
grep -q '>tensor-parallel group</text>' "$W/g-tp/gantt.svg" && grep -q '>TP all-reduce</text>' "$W/g-tp/gantt.svg" ||
  fail "--tp: no lane or legend for the tensor-parallel all-reduces"
echo "ok: both schedules traced in their order and drawn, 16 bars each; --tp: $n all-reduces a step, drawn"
