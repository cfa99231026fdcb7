#!/bin/sh
# ckptdiff.sh BINDIR "MPIRUN [FLAGS]" — ckptdiff on real runs of tagtrain over
# tagsynth data (no data files needed): p = 1 and p = 2 with the same global
# batch are equal within the default tolerance and not bitwise; another seed,
# a wrong tolerance, another model, a file that is not a checkpoint are told
# apart by the exit status (0 equal, 1 different, 2 not comparable or the
# report lost) with a message saying why.
set -u
BIN=$1 MPIRUN=$2
W=$(mktemp -d /tmp/collkit_ckptdiff.XXXXXX)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
"$BIN/tagsynth" --rows 720 --seed 1 --out "$W/d.csv" > /dev/null || { echo "FAIL: tagsynth"; exit 1; }
A="--data $W/d.csv --folds 5 --fold 5 --features 1024 --hidden 32 --epochs 1 --dropout 0 --quiet"
$MPIRUN -np 1 "$BIN/tagtrain" $A --save "$W/p1" > "$W/o" 2>&1 &&
$MPIRUN -np 2 "$BIN/tagtrain" $A --save "$W/p2" >> "$W/o" 2>&1 &&
$MPIRUN -np 1 "$BIN/tagtrain" $A --seed 7 --save "$W/s7" >> "$W/o" 2>&1 &&
$MPIRUN -np 1 "$BIN/tagtrain" $A --hidden 16 --save "$W/h16" >> "$W/o" 2>&1
check '[ $? -eq 0 ]' "a training run failed: $(cat "$W/o")"

"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/p2/last.ckpt" > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 0 ] && grep -q "equal within 1e-05" "$W/d" && ! grep -q "differ in" "$W/d"' "p = 1 vs 2: rc $rc $(cat "$W/d")"
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/p2/last.ckpt" --rtol 0 > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 1 ] && grep -q "DIFFERENT: [0-9]* parameters* beyond 0" "$W/d"' "p = 1 vs 2 is not bitwise, --rtol 0: rc $rc $(cat "$W/d")"
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/s7/last.ckpt" > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 1 ] && grep -q "at [Wb]_[0-9] \[" "$W/d" && grep -q "the runs differ in: seed 1234 vs 7;" "$W/d"' "another seed: rc $rc $(cat "$W/d")"
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/s7/last.ckpt" --quiet > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 1 ] && [ ! -s "$W/d" ]' "--quiet: rc $rc $(cat "$W/d")"
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/h16/last.ckpt" > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 2 ] && grep -q "hold different models" "$W/d"' "another model: rc $rc $(cat "$W/d")"
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/d.csv" > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 2 ] && grep -q "not a tagtrain checkpoint" "$W/d"' "a CSV: rc $rc $(cat "$W/d")"
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/none" > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 2 ] && grep -q "cannot open" "$W/d"' "a missing file: rc $rc $(cat "$W/d")"
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/p2/last.ckpt" --rtol -1 > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 2 ] && grep -q "rtol: want a number >= 0" "$W/d"' "--rtol -1: rc $rc $(cat "$W/d")"
# A report that cannot be written is an error, not a verdict; so for tagsynth's.
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/p2/last.ckpt" > /dev/full 2> "$W/d"; rc=$?
check '[ $rc -eq 2 ] && grep -q "ckptdiff: cannot write standard output" "$W/d"' "report to a full disk: rc $rc $(cat "$W/d")"
"$BIN/tagsynth" --rows 10 --out "$W/s.csv" > /dev/full 2> "$W/d"; rc=$?
check '[ $rc -eq 1 ] && grep -q "tagsynth: cannot write standard output" "$W/d"' "tagsynth report to a full disk: rc $rc $(cat "$W/d")"
"$BIN/ckptdiff" "$W/p1/last.ckpt" > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 2 ] && grep -q "usage" "$W/d"' "one file: rc $rc"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
