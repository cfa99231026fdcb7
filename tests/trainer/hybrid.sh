#!/bin/sh
# hybrid.sh BINDIR "MPIRUN [FLAGS]" — tagtrain --tp T --pp S with data
# parallelism (the 3-D mesh: T ranks split each stage's layers, S stages, p /
# (T S) replicas) against one rank on the Made With ML data.
#   equivalence  --tp 2 --pp 2 at p = 4 with both schedules, SGD too, a deeper
#                model (a cut after a row-split layer, --tp-algo rd), and at
#                p = 8 (two replicas): ckptdiff equal to the 1-rank run (AdamW
#                within 1e-5, SGD within 1e-6, as the DP tests; dropout 0)
#   can fail     the hidden hook TAGTRAIN_TEST_PP_BOUNDARY=1 wires each stage
#                boundary to the next stage's wrong tensor rank: ckptdiff must
#                call it DIFFERENT
#   --zero 1     at p = 8 each shard's optimizer state sharded over its 2
#                replicas: equal to one rank, the state per rank halved in the log
#   one format   a hybrid --zero 1 run at p = 8 stopped after an epoch resumes
#                at p = 1, and a 1-rank one under it (gpipe), each ending equal
#                to the whole run
#   memory       the run record says tp 2, pp 2; rank 0's W_0 bytes (parameters,
#                gradients, m, v) half the whole model's, its activations logged
#   refusals     --tp x --pp not dividing p, micro-batches not dividing a
#                replica's batch, --zero 2 with the hybrid: exit 2 with the
#                reason, before the data is read
# Small model (1024 features, 32 hidden), 2 epochs: about a second a run.
set -u
BIN=$1 MPIRUN=$2
W=$(mktemp -d /tmp/collkit_trainer_hybrid.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/../lib/need_data.sh"
skip_without_data
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
jfield() { grep "\"type\":\"$2\"" "$1" | sed "s/.*\"$3\":\\([^,}]*\\).*/\\1/"; }
C="--features 1024 --batch 32 --epochs 2 --folds 5 --fold 5 --quiet --dropout 0"
H="--tp 2 --pp 2"
run() { np=$1 dir=$2; shift 2; $MPIRUN -np "$np" "$BIN/tagtrain" $C --save "$W/$dir" --log "$W/$dir.jsonl" "$@" \
          > "$W/$dir.out" 2>&1 || echo "run $dir (p = $np $*) failed: $(cat "$W/$dir.out")"; }
same() {   # same REF DIR [ckptdiff options]: equal within the tolerance
  ref=$1 dir=$2; shift 2
  "$BIN/ckptdiff" "$W/$ref/last.ckpt" "$W/$dir/last.ckpt" "$@" > "$W/d" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "equal within" "$W/d"' "$dir against $ref: rc $rc $(cat "$W/d")"
}

# Equivalence with one rank. --hidden 32: the cut falls after W_0, split by
# columns (each rank sends its columns); 32,16,8: after layer 1, split by rows
# (the whole activations go).
run 1 p1 --hidden 32
run 4 f1b --hidden 32 $H --microbatches 4
run 4 gpipe --hidden 32 $H --microbatches 2 --pp-schedule gpipe
run 1 sgd1 --hidden 32 --optimizer sgd --lr 0.5
run 4 sgd4 --hidden 32 --optimizer sgd --lr 0.5 $H --microbatches 4
run 1 deep1 --hidden 32,16,8
run 4 deep4 --hidden 32,16,8 $H --microbatches 4 --tp-algo rd
run 8 dp2 --hidden 32 $H --microbatches 2
run 8 zero --hidden 32 $H --microbatches 2 --zero 1
same p1 f1b
same p1 gpipe
same sgd1 sgd4 --rtol 1e-6
same deep1 deep4
same p1 dp2
same p1 zero

# The check can fail: the stage boundaries wired to the wrong tensor ranks.
TAGTRAIN_TEST_PP_BOUNDARY=1 run 4 wrong --hidden 32 $H --microbatches 4
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/wrong/last.ckpt" > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 1 ] && grep -q "DIFFERENT" "$W/d"' "a wrong stage boundary must differ: rc $rc $(cat "$W/d")"

# One checkpoint format, across plans.
run 8 half --hidden 32 $H --microbatches 2 --zero 1 --stop-after 1 --save-every 1
$MPIRUN -np 1 "$BIN/tagtrain" --resume "$W/half/last.ckpt" --save "$W/half" --quiet > "$W/r.out" 2>&1
check '[ $? -eq 0 ]' "resume at p = 1: $(cat "$W/r.out")"
same p1 half
run 1 half1 --hidden 32 --stop-after 1 --save-every 1
$MPIRUN -np 8 "$BIN/tagtrain" --resume "$W/half1/last.ckpt" --save "$W/half1" $H --microbatches 4 \
        --pp-schedule gpipe --zero 1 --quiet > "$W/r.out" 2>&1
check '[ $? -eq 0 ]' "resume under --tp 2 --pp 2 --zero 1: $(cat "$W/r.out")"
same p1 half1

# The log: the plan, and what rank 0 (stage 0, tensor rank 0) holds.
check '[ "$(jfield "$W/f1b.jsonl" run tp)" = 2 ] && [ "$(jfield "$W/f1b.jsonl" run pp)" = 2 ]' \
      "the run record's plan: $(grep '"type":"run"' "$W/f1b.jsonl")"
w0=$(jfield "$W/f1b.jsonl" run w0_bytes_per_rank) w0all=$(jfield "$W/f1b.jsonl" run w0_bytes_replicated)
check '[ -n "$w0" ] && [ $((w0 * 2)) -eq "$w0all" ] && [ "$w0all" -eq $((4 * 1024 * 32 * 4)) ]' \
      "W_0 bytes on rank 0 $w0, whole $w0all: want half of 4 x 1024 x 32 floats"
# --zero 1: the shard's optimizer state halved over the 2 replicas, the parameters and gradients whole.
s2=$(jfield "$W/dp2.jsonl" run optim_state_bytes_per_rank) sz=$(jfield "$W/zero.jsonl" run optim_state_bytes_per_rank)
check '[ -n "$sz" ] && [ $((sz * 2)) -eq "$s2" ] && [ "$(jfield "$W/zero.jsonl" run param_bytes_per_rank)" = \
       "$(jfield "$W/dp2.jsonl" run param_bytes_per_rank)" ] && [ "$(jfield "$W/zero.jsonl" run zero)" = 1 ]' \
      "--zero 1 optimizer state per rank $sz B, without $s2 B: want half"
act=$(jfield "$W/f1b.jsonl" run activation_bytes_per_rank)
check '[ -n "$act" ] && [ "$act" -gt 0 ]' "activation bytes logged: $act"

# Bad plans: refused before the data is read, with the reason.
refused() {   # refused NP WANT ARGS...
  np=$1 want=$2; shift 2
  $MPIRUN -np "$np" "$BIN/tagtrain" --data "$W/none.csv" --no-save "$@" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q -- "$want" "$W/o" && ! grep -q "none.csv" "$W/o"' "$* at p = $np: rc $rc $(cat "$W/o")"
}
refused 2 "tp 2 x --pp 2 = 4 does not divide the 2 ranks" $H
refused 4 "microbatches 3 does not divide" $H --microbatches 3
refused 4 "pp does not take --zero 2 yet" $H --zero 2
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
