#!/usr/bin/env bash
# refuse.sh BINDIR SRC — lab 08's seam: a schedule a program registers
# (CK_REGISTER_SCHEDULE, collkit_pp.h) is taken by --pp-schedule NAME, and one
# that is not a whole schedule, or would hang, is refused before it runs,
# with the reason, never run into a wait that does not end:
#   hang   each stage's list is whole, together they would hang: the stages
#          and what each waits for are named
#   drop   the last stage leaves its last backward out
#   name   an unknown name lists the known ones, the program's own among them
# (Proven able to fail: with play() in trainer/pp.c returning 0 the hang run
# runs into the watchdog instead, and the first check fails.)
set -u
BIN=$1 SRC=$2
W=$(mktemp -d /tmp/collkit_lab08_refuse.XXXXXX)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
"$BIN/collkit-cc" "$SRC/tests/labs/modelpar/hangs.c" -o "$W/hangs" > "$W/cc.txt" 2>&1 || { cat "$W/cc.txt"; echo "FAIL: collkit-cc"; exit 1; }
"$BIN/tagsynth" --rows 64 --out "$W/d.csv" > /dev/null && "$BIN/tagsynth" --rows 32 --seed 2 --out "$W/h.csv" > /dev/null
run() { HANGS_HOW=$1 COLLKIT_TIMEOUT=20 timeout 120 "$BIN/ckrun" -np 2 "$W/hangs" train --data "$W/d.csv" --holdout "$W/h.csv" \
          --epochs 1 --no-save --quiet --features 256 --hidden 16 --pp 2 --microbatches 4 --pp-schedule my_1f1b > "$W/$1.txt" 2>&1; echo $? > "$W/$1.rc"; }
run hang
run drop
check "[ \"\$(cat $W/hang.rc)\" != 0 ] && grep -q \"tagtrain: --pp-schedule my_1f1b (2 stages, 4 micro-batches): the schedule would hang: stage 0's B 0 waits for stage 1's B 0; stage 1's F 3 waits for stage 0's F 3\" $W/hang.txt" \
      "a schedule that would hang is refused, naming what each stage waits for: $(grep -m2 'tagtrain\|watchdog' "$W/hang.txt")"
check "! grep -q 'watchdog' $W/hang.txt" "the hanging schedule was run into the watchdog"
check "[ \"\$(cat $W/drop.rc)\" != 0 ] && grep -q 'stage 1: 7 operations, not 2M = 8 (each F k and B k once)' $W/drop.txt" \
      "a stage's list without its last backward is refused: $(grep -m1 tagtrain "$W/drop.txt")"
"$W/hangs" train --pp 2 --pp-schedule nosuch > "$W/name.txt" 2>&1; rc=$?
check "[ $rc = 2 ] && grep -q \"no such schedule (known: gpipe 1f1b my_1f1b)\" $W/name.txt" "an unknown name: exit $rc, $(head -1 "$W/name.txt")"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
