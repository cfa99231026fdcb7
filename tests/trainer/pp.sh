#!/bin/sh
# pp.sh BINDIR "MPIRUN [FLAGS]" — tagtrain --pp (pipeline parallelism, and with
# data parallelism the hybrid) against one rank on the Made With ML data.
#   equivalence  --pp 2 --microbatches 4 at p = 2 with both schedules, --pp 2 x 2
#                replicas at p = 4, --pp 3 and --pp 4 on a model of three hidden
#                layers: ckptdiff equal to the 1-rank run (AdamW within 1e-5,
#                SGD within 1e-6, as the DP tests; dropout 0)
#   can fail     the hidden hook TAGTRAIN_TEST_PP_DROP=1 drops the last
#                micro-batch on every stage: ckptdiff must call it DIFFERENT
#   one format   a --pp 2 x 2 run stopped after an epoch resumes at p = 1 (and
#                a 1-rank one at --pp 2, gpipe), ending equal to the whole run
#   the log      the bubble's model (S-1)/(M+S-1) and a measured one in (0, 1);
#                gpipe's activations on stage 0 M / S times 1f1b's (M = 4, S = 2)
#   refusals     --pp not dividing p (nor --tp x --pp), more stages than layers,
#                micro-batches not dividing a replica's batch, --microbatches without --pp: exit 2
#                with the reason, before the data is read
set -u
BIN=$1 MPIRUN=$2
W=$(mktemp -d /tmp/collkit_trainer_pp.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/../lib/need_data.sh"
skip_without_data
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
jfield() { grep "\"type\":\"$2\"" "$1" | sed "s/.*\"$3\":\\([^,}]*\\).*/\\1/"; }
C="--features 1024 --batch 32 --epochs 2 --folds 5 --fold 5 --quiet --dropout 0"
run() { np=$1 dir=$2; shift 2; $MPIRUN -np "$np" "$BIN/tagtrain" $C --save "$W/$dir" --log "$W/$dir.jsonl" "$@" \
          > "$W/$dir.out" 2>&1 || echo "run $dir (p = $np $*) failed: $(cat "$W/$dir.out")"; }
same() {   # same REF DIR [ckptdiff options]: equal within the tolerance
  ref=$1 dir=$2; shift 2
  "$BIN/ckptdiff" "$W/$ref/last.ckpt" "$W/$dir/last.ckpt" "$@" > "$W/d" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "equal within" "$W/d"' "$dir against $ref: rc $rc $(cat "$W/d")"
}

run 1 p1 --hidden 32
run 2 f1b --hidden 32 --pp 2 --microbatches 4
run 2 gpipe --hidden 32 --pp 2 --microbatches 4 --pp-schedule gpipe
run 4 hybrid --hidden 32 --pp 2 --microbatches 2
run 1 sgd1 --hidden 32 --optimizer sgd --lr 0.5
run 2 sgd2 --hidden 32 --optimizer sgd --lr 0.5 --pp 2 --microbatches 8
run 1 deep1 --hidden 32,16,8
run 3 deep3 --hidden 32,16,8 --pp 3 --microbatches 4 --pp-schedule gpipe
run 4 deep4 --hidden 32,16,8 --pp 4 --microbatches 8
same p1 f1b
same p1 gpipe
same p1 hybrid
same sgd1 sgd2 --rtol 1e-6
same deep1 deep3
same deep1 deep4

# The check can fail: a micro-batch dropped.
TAGTRAIN_TEST_PP_DROP=1 run 2 drop --hidden 32 --pp 2 --microbatches 4
"$BIN/ckptdiff" "$W/p1/last.ckpt" "$W/drop/last.ckpt" > "$W/d" 2>&1; rc=$?
check '[ $rc -eq 1 ] && grep -q "DIFFERENT" "$W/d"' "a dropped micro-batch must differ: rc $rc $(cat "$W/d")"

# One checkpoint format, across plans.
run 4 half --hidden 32 --pp 2 --microbatches 2 --stop-after 1 --save-every 1
$MPIRUN -np 1 "$BIN/tagtrain" --resume "$W/half/last.ckpt" --save "$W/half" --quiet > "$W/r.out" 2>&1
check '[ $? -eq 0 ]' "resume at p = 1: $(cat "$W/r.out")"
same p1 half
run 1 half1 --hidden 32 --stop-after 1 --save-every 1
$MPIRUN -np 2 "$BIN/tagtrain" --resume "$W/half1/last.ckpt" --save "$W/half1" --pp 2 --microbatches 8 \
        --pp-schedule gpipe --quiet > "$W/r.out" 2>&1
check '[ $? -eq 0 ]' "resume at --pp 2: $(cat "$W/r.out")"
same p1 half1

# The log: the bubble, modelled and measured; the activations each schedule keeps.
check '[ "$(jfield "$W/f1b.jsonl" run bubble_model)" = 0.2 ] && [ "$(jfield "$W/f1b.jsonl" summary bubble_model)" = 0.2 ]' \
      "bubble model for S = 2, M = 4: $(grep bubble "$W/f1b.jsonl")"
check 'jfield "$W/f1b.jsonl" summary bubble_measured | awk "{exit !(\$1 > 0 && \$1 < 1)}"' \
      "a measured bubble in (0, 1): $(jfield "$W/f1b.jsonl" summary bubble_measured)"
check 'grep -q "pipeline bubble: measured 0\.[0-9]* of the stages. time (waiting for a neighbour), model (S-1)/(M+S-1) = 0.200 (1f1b, 2 stages, 4 micro-batches)" "$W/f1b.out"' \
      "the summary line: $(cat "$W/f1b.out")"
a1=$(jfield "$W/f1b.jsonl" run activation_bytes_per_rank) ag=$(jfield "$W/gpipe.jsonl" run activation_bytes_per_rank)
check '[ -n "$a1" ] && [ "$ag" -eq $((a1 * 2)) ]' "stage 0 keeps 4 micro-batches with gpipe, 2 with 1f1b: $ag B and $a1 B"

# Bad plans: refused before the data is read, with the reason.
refused() {   # refused NP WANT ARGS...
  np=$1 want=$2; shift 2
  $MPIRUN -np "$np" "$BIN/tagtrain" --data "$W/none.csv" --no-save "$@" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q -- "$want" "$W/o" && ! grep -q "none.csv" "$W/o"' "$* at p = $np: rc $rc $(cat "$W/o")"
}
refused 4 "pp 3 does not divide the 4 ranks" --pp 3
refused 3 "more stages than the model's 2 layers" --pp 3
refused 2 "microbatches 3 does not divide" --pp 2 --microbatches 3
refused 2 "microbatches goes with --pp" --microbatches 2
refused 2 "tp 2 x --pp 2 = 4 does not divide the 2 ranks" --pp 2 --tp 2
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
