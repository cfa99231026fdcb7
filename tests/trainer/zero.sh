#!/bin/sh
# zero.sh BINDIR "MPIRUN [FLAGS]" [all] — tagtrain --zero 1 (the optimizer state
# sharded: gradients reduce-scattered, each rank's block stepped, parameters
# all-gathered) against replicated data parallelism on tagsynth data:
#   - p = 2, ring + ring: bit for bit the replicated run (a sum of two is the
#     same in either order); other pairs within ckptdiff's 1e-5;
#   - p = 3: within 1e-5 for each reduce-scatter and each all-gather algorithm
#     (rotated pairs; with "all", every pair);
#   - a sharded run saves the whole state (one checkpoint format): resumed at
#     another p (2 -> 3), sharded or not, it continues as the replicated run;
#   - optimizer-state memory per rank is 1/p of the replicated run's, as the
#     log prints it (rank 0: the largest block) and as measured: peak resident
#     memory drops by that much (a model whose Adam state is 17 MB);
#   - --trace records each step's backward, reduce-scatter, optimizer step and all-gather;
#   - --zero with --bucket-mb, an unknown --rs-algo: a clear error, exit 2.
set -u
BIN=$1 MPIRUN=$2 ALL=${3:-}
W=$(mktemp -d /tmp/collkit_zero.XXXXXX)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
jfield() { grep "\"type\":\"$2\"" "$1" | sed "s/.*\"$3\":\\([^,}]*\\).*/\\1/"; }
train() { np=$1; shift; $MPIRUN -np "$np" "$BIN/tagtrain" $A "$@" > "$W/o" 2>&1 || { echo "tagtrain -np $np $*:"; cat "$W/o"; return 1; }; }
"$BIN/tagsynth" --rows 720 --seed 1 --out "$W/d.csv" > /dev/null || { echo "FAIL: tagsynth"; exit 1; }
A="--data $W/d.csv --folds 5 --fold 5 --features 1024 --hidden 32 --epochs 2 --dropout 0 --quiet --transport mpi"
RS="ring halving direct mpi" AG="ring rd direct mpi"

# equal P RS AG TOL: a --zero 1 run at P ranks against the replicated one.
equal() {
  train "$1" --zero 1 --rs-algo "$2" --ag-algo "$3" --save "$W/z"
  check '[ $? -eq 0 ]' "p = $1, $2 + $3: the run failed"
  "$BIN/ckptdiff" "$W/dp$1/last.ckpt" "$W/z/last.ckpt" --rtol "$4" > "$W/d" 2>&1
  check '[ $? -eq 0 ]' "p = $1, reduce-scatter $2 + all-gather $3 differs from replicated beyond $4: $(cat "$W/d")"
}
train 2 --algo ring --save "$W/dp2"; check '[ $? -eq 0 ]' "replicated p = 2"
train 3 --algo ring --save "$W/dp3"; check '[ $? -eq 0 ]' "replicated p = 3"
equal 2 ring ring 0
equal 2 halving rd 1e-5
set -- $AG
for rs in $RS; do
  if [ "$ALL" = all ]; then
    for ag in $AG; do equal 3 "$rs" "$ag" 1e-5; done
  else
    equal 3 "$rs" "$1" 1e-5; shift   # each reduce-scatter with another all-gather
  fi
done

# One checkpoint format: 1 epoch at p = 2, then the second at p = 3.
train 2 --zero 1 --save "$W/rz" --stop-after 1 && train 3 --zero 1 --resume "$W/rz/last.ckpt" --save "$W/rz"
check '[ $? -eq 0 ]' "sharded run resumed at another p"
train 2 --save "$W/r0" --stop-after 1 && train 3 --resume "$W/r0/last.ckpt" --save "$W/r0"
check '[ $? -eq 0 ]' "replicated run resumed at another p"
"$BIN/ckptdiff" "$W/r0/last.ckpt" "$W/rz/last.ckpt" > "$W/d" 2>&1
check '[ $? -eq 0 ]' "the sharded run resumed at p = 3 differs from the replicated one: $(cat "$W/d")"

# Memory: the log's figures, and peak resident memory.
train 3 --zero 1 --no-save --log "$W/z.log" --trace "$W/z.json" && train 3 --no-save --log "$W/r.log"
check '[ $? -eq 0 ]' "runs with --log"
# --trace: on every rank, every step's main thread is backward (layers 1, 0), then the
# reduce-scatter, the optimizer step on the rank's block, the all-gather, in that order
steps=$(grep -c '"type":"step"' "$W/z.log")
why=$(sed -n 's/.*"cat":"\([a-z]*\)".*"pid":\([0-9]*\),"tid":0,"ts":\([0-9.]*\).*"step":\([0-9]*\),"call":\([0-9]*\)}}.*/\2 \5 \1\4/p' "$W/z.json" |
  awk -v steps="$steps" '{ seq[$1, $2] = seq[$1, $2] " " $3 }
    END { for (r = 0; r < 3; r++) for (k = 0; k < steps; k++)
            if (seq[r, k] != " layer1 layer0 rs0 optimizer0 ag0") { print "rank " r " step " k ":" seq[r, k]; exit } }')
check '[ "$steps" -gt 1 ] && [ -z "$why" ]' "--zero 1 --trace, not backward then the two halves around the optimizer: $why"
n=$(jfield "$W/z.log" run params)
zs=$(jfield "$W/z.log" run optim_state_bytes_per_rank) rs=$(jfield "$W/r.log" run optim_state_bytes_per_rank)
check '[ "$zs" -eq $(( 8 * ((n + 2) / 3) )) ] && [ "$rs" -eq $(( 8 * n )) ]' \
  "optimizer state per rank: --zero 1 $zs B, replicated $rs B, want 8 x ceil($n / 3) and 8 x $n"
check '[ "$(jfield "$W/z.log" run optim_state_bytes_replicated)" -eq "$rs" ]' "the replicated figure in the sharded log"
B="--features 32768 --hidden 64 --epochs 1 --no-save"
train 2 --zero 1 $B --log "$W/zb.log" && train 2 $B --log "$W/rb.log"
check '[ $? -eq 0 ]' "large-model runs"
zp=$(jfield "$W/zb.log" summary peak_rss_bytes) rp=$(jfield "$W/rb.log" summary peak_rss_bytes)
saved=$(( $(jfield "$W/rb.log" run optim_state_bytes_per_rank) - $(jfield "$W/zb.log" run optim_state_bytes_per_rank) ))
check 'awk -v z="$zp" -v r="$rp" -v s="$saved" "BEGIN { exit !(r - z >= 0.75 * s) }"' \
  "peak resident memory: replicated $rp B, --zero 1 $zp B, want a drop of about the optimizer state saved, $saved B"
echo "peak resident memory at p = 2: replicated $rp B, --zero 1 $zp B (optimizer state $saved B less per rank)"

# Errors before any training (one process is enough).
"$BIN/tagtrain" $A --zero 1 --bucket-mb 1 > "$W/o" 2>&1
check '[ $? -eq 2 ] && grep -q "not with --bucket-mb" "$W/o"' "--zero 1 --bucket-mb: $(cat "$W/o")"
"$BIN/tagtrain" $A --zero 1 --rs-algo rd > "$W/o" 2>&1
check '[ $? -eq 2 ] && grep -q "rs-algo: unknown algorithm .rd." "$W/o"' "--rs-algo rd (an all-gather's): $(cat "$W/o")"
"$BIN/tagtrain" $A --zero 2 > "$W/o" 2>&1
check '[ $? -eq 2 ] && grep -q "zero: want 0" "$W/o"' "--zero 2: $(cat "$W/o")"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
