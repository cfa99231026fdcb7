#!/usr/bin/env bash
# bench_plans.sh BUILD OUTDIR — the parallel plans side by side, for `make
# bench` (called by scripts/bench_trainer.sh): tagtrain at p = 4 on the Made
# With ML data, one run per plan, each on the same global batch:
#   dp        data parallelism over 4 replicas, the gradients all-reduced in buckets (--bucket-mb 4)
#   zero2     ZeRO stage 2 over 4 ranks (gradients and optimizer state sharded)
#   tp2xdp2   tensor parallelism --tp 2 with 2 data-parallel replicas
#   pp2xdp2   pipeline parallelism --pp 2 --microbatches 4, 1F1B, with 2 replicas
#   tp2xpp2   the hybrid --tp 2 --pp 2 (one replica); a tagtrain that refuses the
#             combination leaves it out, named in OUTDIR/plans_setup.txt
# Every figure is tagtrain's own --log: the run record's bytes per rank (rank
# 0's: parameters, gradients, optimizer state, activations), the summary's
# peak resident memory (the largest rank's), wall seconds per step
# (train_time_s / steps), samples/s, and the buffers the step's collectives
# cover (allreduce_bytes_per_step: the gradients' all-reduce or
# reduce-scatter, and --tp's all-reduces in forward and backward; not --pp's
# point-to-point activations). Writes
#   OUTDIR/plans.csv        plan,p,tp,pp,dp,step_s,samples_per_s,param_bytes,grad_bytes,
#                           optim_state_bytes,activation_bytes,peak_rss_bytes,coll_bytes_per_step
#   OUTDIR/plans_setup.txt  one line: the configuration (the summary's heading says it)
#   OUTDIR/plans_PLAN.{jsonl,txt}   each run's log and output
# PLANS_EPOCHS (1), PLANS_FEATURES (tagtrain's default) and PLANS_HIDDEN
# (tagtrain's default) change the configuration (the tests use a tiny one).
# A run that fails is a row of NaN, named in OUTDIR/plans_failed.txt, and the
# script exits 1. On a machine with fewer cores than 4 the ranks time-share
# the cores: the step times then measure that as much as the plan; the bytes
# per rank do not depend on it. About 35 s on 2 cores.
#
#   bench_plans.sh --header                      plans.csv's header line
#   bench_plans.sh --row NAME LOG [--no-rss]     the row of one tagtrain --log
#                                                (scripts/sim-bench.sh: its simulated
#                                                runs, with no resident memory of their own)
set -euo pipefail
HEADER=plan,p,tp,pp,dp,step_s,samples_per_s,param_bytes,grad_bytes,optim_state_bytes,activation_bytes,peak_rss_bytes,coll_bytes_per_step

# One field of one record type of a log ("null" and absent: NaN).
field() {   # field LOG TYPE KEY
  grep "\"type\":\"$2\"" "$1" | head -1 | sed -n "s/.*\"$3\":\([^,}]*\).*/\1/p" | sed 's/^null$/NaN/' | grep . || echo NaN
}
# The CSV row of one run's log (peak RSS NaN with --no-rss).
row_of() {   # row_of NAME LOG [--no-rss]
  local l=$2 p tp pp steps tt rss
  p=$(field "$l" run ranks) tp=$(field "$l" run tp) pp=$(field "$l" run pp)
  steps=$(field "$l" summary steps) tt=$(field "$l" summary train_time_s) rss=$(field "$l" summary peak_rss_bytes)
  [ "${3:-}" = --no-rss ] && rss=NaN
  printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$1" "$p" "$tp" "$pp" $((p / (tp * pp))) \
    "$(awk -v t="$tt" -v n="$steps" 'BEGIN { printf "%.6g", (n > 0 ? t / n : 0) }')" \
    "$(field "$l" summary samples_per_s)" "$(field "$l" run param_bytes_per_rank)" \
    "$(field "$l" run grad_bytes_per_rank)" "$(field "$l" run optim_state_bytes_per_rank)" \
    "$(field "$l" run activation_bytes_per_rank)" "$rss" \
    "$(awk -v b="$(field "$l" summary allreduce_bytes_per_step)" 'BEGIN { printf "%.0f", b }')"
}
case ${1:-} in
  --header) echo "$HEADER"; exit 0 ;;
  --row) [ $# -ge 3 ] && [ -s "$3" ] || { echo "bench_plans: --row NAME LOG: no log '${3:-}'" >&2; exit 2; }
         row_of "$2" "$3" "${4:-}"; exit 0 ;;
esac
cd "$(dirname "$0")/.."   # BUILD and OUTDIR are taken from the source tree, as bench.sh gives them
BUILD=${1:-build} OUT=${2:-bench-results/latest}
TAGTRAIN=$BUILD/bin/tagtrain
[ -x "$TAGTRAIN" ] || { echo "bench_plans: $TAGTRAIN not found: build first" >&2; exit 1; }
# The settings, checked before anything runs or is written.
count() {   # count NAME VALUE MAX: a whole number from 1 to MAX, or exit 2
  [[ $2 =~ ^[1-9][0-9]{0,8}$ ]] && [ "$2" -le "$3" ] ||
    { echo "bench_plans: $1='$2': want a whole number from 1 to $3" >&2; exit 2; }
}
EPOCHS=${PLANS_EPOCHS:-1}
count PLANS_EPOCHS "$EPOCHS" 10000
MODEL=()
[ -n "${PLANS_FEATURES:-}" ] && { count PLANS_FEATURES "$PLANS_FEATURES" 16777216; MODEL+=(--features "$PLANS_FEATURES"); }
[ -n "${PLANS_HIDDEN:-}" ] && { count PLANS_HIDDEN "$PLANS_HIDDEN" 65536; MODEL+=(--hidden "$PLANS_HIDDEN"); }
mkdir -p "$OUT"
rm -f "$OUT/plans_failed.txt" "$OUT"/plans_*.jsonl
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -n "${MPIRUN:-}" ]; then
  # shellcheck disable=SC2206  # one word per option, as typed
  LAUNCH=($MPIRUN)
else
  LAUNCH=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 --mca btl self,vader)
fi
P=4
T0=$(date +%s)
say() { printf '[plans %4ds] %s\n' $(( $(date +%s) - T0 )) "$*"; }

# One plan: its row on stdout; a refused combination prints nothing.
run_plan() {   # run_plan NAME TP PP OPTIONS...
  local name=$1 tp=$2 pp=$3; shift 3
  local log="$OUT/plans_$name.jsonl" txt="$OUT/plans_$name.txt"
  if "${LAUNCH[@]}" -np "$P" "$TAGTRAIN" "$@" --algo ring --transport mpi --epochs "$EPOCHS" "${MODEL[@]}" \
       --threads 1 --no-save --quiet --log "$log" > "$txt" 2>&1; then
    row_of "$name" "$log"
  elif grep -q "does not take" "$txt"; then
    say "$name: refused by tagtrain: $(grep -m1 'does not take' "$txt" | sed 's/^tagtrain: //')" >&2
    echo "$name: refused by tagtrain ($(grep -m1 'does not take' "$txt" | sed 's/^tagtrain: //; s/:.*//'))" >> "$OUT/plans_setup.txt"
  else
    echo "$name,$P,$tp,$pp,$((P / (tp * pp))),NaN,NaN,NaN,NaN,NaN,NaN,NaN,NaN"
    echo "$name: $txt" >> "$OUT/plans_failed.txt"
  fi
}

echo "the default model on the Made With ML data${PLANS_FEATURES:+, $PLANS_FEATURES features}${PLANS_HIDDEN:+, $PLANS_HIDDEN hidden units}; p = $P on $(nproc) cores; $EPOCHS epoch(s), global batch 32, one OpenBLAS thread per rank, ring over mpi for every collective" \
  > "$OUT/plans_setup.txt"
say "p=$P: dp, zero2, tp2xdp2, pp2xdp2, tp2xpp2 ($EPOCHS epoch(s))"
{
  echo "$HEADER"
  run_plan dp 1 1 --bucket-mb 4
  run_plan zero2 1 1 --zero 2
  run_plan tp2xdp2 2 1 --tp 2 --tp-algo ring
  run_plan pp2xdp2 1 2 --pp 2 --microbatches 4 --pp-schedule 1f1b
  run_plan tp2xpp2 2 2 --tp 2 --tp-algo ring --pp 2 --microbatches 4 --pp-schedule 1f1b
} > "$OUT/plans.csv"
say "wrote $OUT/plans.csv"
if [ -s "$OUT/plans_failed.txt" ]; then
  say "$(wc -l < "$OUT/plans_failed.txt") plan(s) failed:"; sed 's/^/  /' "$OUT/plans_failed.txt"
  exit 1
fi
