#!/bin/sh
# tp.sh BINDIR "MPIRUN [FLAGS]" — tagtrain --tp (tensor parallelism, and with
# data parallelism the hybrid) against one rank on the Made With ML data.
#   equivalence  --tp 2 at p = 2, --tp 2 x 2 replicas at p = 4, a deeper model
#                (a pair whose column layer has an input gradient), --tp 3 at
#                p = 3, each a student-replaceable --tp-algo, --tp 2 x 2 with
#                --zero 1 (each shard's optimizer state over its replicas): ckptdiff equal to
#                the 1-rank run (AdamW within 1e-5, SGD within 1e-6, as the DP
#                tests); with dropout too (the group draws one rank's masks)
#   can fail     the hidden hook TAGTRAIN_TEST_TP_SHIFT=1 shifts the last
#                rank's shard one column: ckptdiff must call it DIFFERENT
#   one format   a --tp 2 x 2 run stopped after an epoch resumes at p = 1
#                (and a 1-rank one at --tp 4), ending equal to the whole run
#   memory       the log's W_0 bytes (parameters, gradients, m, v) per rank are
#                half the whole model's at --tp 2, and the rank's total about half
#                the 1-rank run's
#   refusals     --tp not dividing p or a width, --tp with --zero 2: exit 2 with the
#                reason, before the data is read (a --data that does not exist)
# Small model (1024 features, 32 hidden), 2 epochs: about a second a run.
set -u
BIN=$1 MPIRUN=$2
W=$(mktemp -d /tmp/collkit_trainer_tp.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/../lib/need_data.sh"
skip_without_data
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
jfield() { grep "\"type\":\"$2\"" "$1" | sed "s/.*\"$3\":\\([^,}]*\\).*/\\1/"; }
C="--features 1024 --batch 32 --epochs 2 --folds 5 --fold 5 --quiet"
run() { np=$1 dir=$2; shift 2; $MPIRUN -np "$np" "$BIN/tagtrain" $C --save "$W/$dir" "$@" > "$W/$dir.out" 2>&1 ||
        echo "run $dir (p = $np $*) failed: $(cat "$W/$dir.out")"; }
same() {   # same REF DIR [ckptdiff options]: equal within the tolerance
  ref=$1 dir=$2; shift 2
  "$BIN/ckptdiff" "$W/$ref/last.ckpt" "$W/$dir/last.ckpt" "$@" > "$W/d" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "equal within" "$W/d"' "$dir against $ref: rc $rc $(cat "$W/d")"
}

# Equivalence with one rank.
run 1 p1 --hidden 32 --dropout 0 --log "$W/p1.jsonl"
run 2 tp2 --hidden 32 --dropout 0 --tp 2 --log "$W/tp2.jsonl"
run 4 tp2dp2 --hidden 32 --dropout 0 --tp 2 --tp-algo rd
run 4 zero1 --hidden 32 --dropout 0 --tp 2 --zero 1
run 1 sgd1 --hidden 32 --dropout 0 --optimizer sgd --lr 0.5
run 4 sgd4 --hidden 32 --dropout 0 --optimizer sgd --lr 0.5 --tp 2
run 1 deep1 --hidden 32,16,8,4 --dropout 0
run 2 deep2 --hidden 32,16,8,4 --dropout 0 --tp 2 --tp-algo twoshot
run 1 w1 --hidden 33 --dropout 0
run 3 w3 --hidden 33 --dropout 0 --tp 3 --tp-algo tree
run 1 drop1 --hidden 32,16 --dropout 0.5
run 2 drop2 --hidden 32,16 --dropout 0.5 --tp 2
same p1 tp2
same p1 tp2dp2
same p1 zero1
same sgd1 sgd4 --rtol 1e-6
same deep1 deep2
same w1 w3
same drop1 drop2
check 'grep -q "\"tp\":2" "$W/tp2.jsonl" && grep -q "\"tp_algo\":\"ring\"" "$W/tp2.jsonl"' "the run record says --tp 2, ring"

# The check can fail: a shard one column off. The column no rank owns then
# holds whatever its memory held: zeros from a fresh page (the run saves and
# ckptdiff finds it DIFFERENT) or an allocator's fill (a sanitized build: the
# save itself refuses the optimizer state). Either way the fault is caught.
TAGTRAIN_TEST_TP_SHIFT=1 run 2 shift --hidden 32 --dropout 0 --tp 2 > /dev/null
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/shift/last.ckpt" > "$W/d" 2>&1; rc=$?
check '{ [ $rc -eq 1 ] && grep -q "DIFFERENT" "$W/d"; } || grep -q "the checkpoint would be invalid" "$W/shift.out"' \
      "a shifted shard must differ: rc $rc $(cat "$W/d") $(cat "$W/shift.out")"

# One checkpoint format: saved under one plan, resumed under another.
run 4 half --hidden 32 --dropout 0 --tp 2 --stop-after 1 --save-every 1
$MPIRUN -np 1 "$BIN/tagtrain" --resume "$W/half/last.ckpt" --save "$W/half" --quiet > "$W/r.out" 2>&1
check '[ $? -eq 0 ]' "resume at p = 1: $(cat "$W/r.out")"
same p1 half
run 1 half1 --hidden 32 --dropout 0 --stop-after 1 --save-every 1
$MPIRUN -np 4 "$BIN/tagtrain" --resume "$W/half1/last.ckpt" --save "$W/half1" --tp 4 --quiet > "$W/r.out" 2>&1
check '[ $? -eq 0 ]' "resume at --tp 4: $(cat "$W/r.out")"
same p1 half1

# Memory, as logged: W_0 with its gradients and optimizer state halved.
w0=$(jfield "$W/tp2.jsonl" run w0_bytes_per_rank) w0all=$(jfield "$W/tp2.jsonl" run w0_bytes_replicated)
check '[ -n "$w0" ] && [ $((w0 * 2)) -eq "$w0all" ] && [ "$w0all" -eq $((4 * 1024 * 32 * 4)) ]' \
      "W_0 bytes per rank $w0, whole $w0all: want half of 4 x 1024 x 32 floats"
total() { echo $(( $(jfield "$1" run param_bytes_per_rank) + $(jfield "$1" run grad_bytes_per_rank) +
                   $(jfield "$1" run optim_state_bytes_per_rank) )); }
t1=$(total "$W/p1.jsonl") t2=$(total "$W/tp2.jsonl")
check '[ $((t2 * 2)) -le $((t1 * 101 / 100)) ] && [ $((t2 * 2)) -ge $t1 ]' \
      "a --tp 2 rank holds $t2 B of parameters, gradients and state, the 1-rank run $t1 B: want about half"

# Bad plans: refused before the data is read, with the reason.
refused() {   # refused NP WANT ARGS...
  np=$1 want=$2; shift 2
  $MPIRUN -np "$np" "$BIN/tagtrain" --data "$W/none.csv" --no-save "$@" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "$want" "$W/o" && ! grep -q "none.csv" "$W/o"' "$* at p = $np: rc $rc $(cat "$W/o")"
}
refused 4 "tp 3 does not divide the 4 ranks" --tp 3
refused 2 "tp 2 does not divide hidden layer 1's width 33" --tp 2 --hidden 33
refused 2 "tp does not take --zero 2" --tp 2 --zero 2
refused 2 "tp-algo: unknown algorithm" --tp 2 --tp-algo nosuch
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
