#!/usr/bin/env bash
# bench.sh BUILD — what `make bench` runs.
#
#   make bench                 quick sweep (about 6 minutes on 2 cores: both transports, the trainer)
#   make bench BENCH=full      more iterations, in-place too, p = 1 2 3 4
#   make bench BENCH=smoke     every step once at its smallest (p = 2, sizes to
#                              64 KB, the trainer for one epoch with ring and
#                              the default): a minute; the test suite runs it
#                              (bench.smoke) so that no step rots unseen
#   BENCH_OUT=DIR              results into DIR (a new folder) instead of
#                              bench-results/<date-time>/
#   BENCH_NP="2 4 8" make bench     choose the rank counts (each once, 1 to 4096;
#                              anything else stops the script before it runs)
#   MPIRUN="mpirun --hostfile hosts" BENCH_NP="16 64" make bench    another launcher
#                              (default: mpirun with the one-machine flags below);
#                              on a cluster the steps that need one node (the shm
#                              transport, twoshot's trace) run where the ranks share
#                              one and are skipped, with the reason, where they do not
#
# Everything goes into ONE new folder, bench-results/<date-time>/, and
# bench-results/latest points at it; earlier results are never touched. A step
# that fails is named as it happens and again at the end; the summary and the
# plots of the rest are still written, and the script then exits 1.
#   summary.md              ratios to MPI_Allreduce, the targets, crossovers
#   load.txt                the machine's load before and after the sweeps (benchreport judges it)
#   sweep.csv / sweep_pN.json / sweep_pN.txt    collbench results per rank count (both transports)
#   sweep_shm_pN.{csv,json,txt}                 the same on the shm transport; in sweep.csv
#                                               its algorithms are named NAME@T, T the transport
#                                               its collbench said it ran on (shm; where the
#                                               ranks span nodes and shm falls back to MPI the
#                                               sweep is skipped: the MPI sweep has those figures)
#   pingpong.csv, params.txt                    ping-pong and the fitted alpha, beta, gamma
#   pingpong_shm.txt, params_shm.txt            the same through the shm transport
#   extrap.csv, scaling.csv                     model to 4096 ranks; speedup/efficiency
#   trace_ring_pipelined.json                   a Chrome trace (https://ui.perfetto.dev)
#   trace_twoshot_shm.json                      twoshot on shm: copy-in, barriers, reduce-scatter, all-gather
#   rs_pN.{csv,txt}, ag_pN.{csv,txt}, colls.csv reduce-scatter and all-gather sweeps (collbench --coll)
#   zero.csv, zero{0,1,2}.{log,txt}             tagtrain replicated vs --zero 1, --zero 2: step time, memory per rank
#   plans.csv, plans_setup.txt                  tagtrain's parallel plans at p = 4 (DP, ZeRO-2, --tp, --pp):
#                                               bytes per rank, peak RSS, step time (scripts/bench_plans.sh)
#   trainer.csv, trainer_gpu.csv                tagtrain's weak scaling per algorithm, on the host and (where
#                                               there is a GPU) --device cuda (scripts/bench_trainer.sh)
#   *.png, *.svg                                the plots (plots/README.md)
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=$BUILD/bin
[ -x "$BIN/collbench" ] || { echo "bench: $BIN/collbench not found: run make first" >&2; exit 1; }

# Open MPI refuses to run as root unless told; the settings stay in this script.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The launcher: $MPIRUN when set (a cluster: MPIRUN="mpirun --hostfile hosts",
# or plain MPIRUN=mpirun inside a Slurm allocation; it must take -np N), else the flags of the tests
# for one machine (cmake/CollkitTest.cmake): more ranks than cores is fine,
# ranks waiting give the core back, shared memory only.
if [ -n "${MPIRUN:-}" ]; then
  # shellcheck disable=SC2206  # one word per option, as typed
  LAUNCH=($MPIRUN)
else
  LAUNCH=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 --mca btl self,vader)
fi

MODE=${BENCH:-quick}
PP_MAX=64M   # the ping-pong's largest message (gamma and memcpy are timed at it)
case "$MODE" in
  quick) NP=${BENCH_NP:-"2 4"}; OPTS=(-b 8 -e 64M -f 2 -n 50 -w 5 --time-budget 0.25 --place out) ;;
  full)  NP=${BENCH_NP:-"1 2 3 4"}; OPTS=(-b 8 -e 64M -f 2 -n 50 -w 5 --time-budget 2 --place both) ;;
  smoke) NP=${BENCH_NP:-"2"}; OPTS=(-b 8 -e 64K -f 8 -n 3 -w 1 --time-budget 0.05 --place out); PP_MAX=1M
         export TRAINER_EPOCHS=${TRAINER_EPOCHS:-1} TRAINER_NP=${TRAINER_NP:-2} TRAINER_ALGOS=${TRAINER_ALGOS:-"ring twoshot@shm"}
         export TRAINER_GPU_ALGOS=${TRAINER_GPU_ALGOS:-"nccl ring"} ;;
  *) echo "bench: BENCH must be quick, full or smoke (got '$MODE')" >&2; exit 2 ;;
esac
# The rank counts, checked before anything runs: whole numbers from 1 to 4096,
# each once (a count given twice would give sweep.csv two rows for the same
# measurement, which benchreport refuses after the whole sweep).
counts() {   # counts NAME VALUE
  local v seen=" "
  [ -n "${2//[[:space:]]/}" ] || { echo "bench: $1 holds only white space: give rank counts, e.g. $1=\"2 4\"" >&2; exit 2; }
  for v in $2; do
    case $v in
      *[!0-9]*|0*) echo "bench: $1='$2': '$v' is not a number of ranks (a whole number from 1 to 4096)" >&2; exit 2 ;;
    esac
    if [ ${#v} -gt 4 ] || [ "$v" -gt 4096 ]; then echo "bench: $1='$2': '$v' is more than 4096 ranks" >&2; exit 2; fi
    case $seen in *" $v "*) echo "bench: $1='$2': $v is given twice" >&2; exit 2 ;; esac
    seen="$seen$v "
  done
}
counts BENCH_NP "$NP"
counts BENCH_GPU_NP "${BENCH_GPU_NP:-1 2 4}"

STAMP=$(date +%Y%m%d-%H%M%S)
T0=$(date +%s)
say() { printf '[bench %4ds] %s\n' $(( $(date +%s) - T0 )) "$*"; }
FAILED=()
failed() { say "$*"; FAILED+=("$*"); }   # a step that failed: named now and at the end
. "$(dirname "$0")/newdir.sh"
if [ -n "${BENCH_OUT:-}" ]; then
  OUT=$BENCH_OUT
  new_dir bench BENCH_OUT "$OUT"
  say "mode $MODE, ranks: $NP; results in $OUT"
else
  new_stamped_dir bench "bench-results/$STAMP" bench-results/latest   # never reuse a folder
  OUT=$NEW_DIR
  say "mode $MODE, ranks: $NP; results in $OUT (bench-results/latest)"
fi

# 1. Ping-pong: alpha, beta, gamma and the memcpy ceiling. With a cluster's
#    MPIRUN at the largest p, so that it finds a pair inside a node and a
#    pair across nodes (collbench times both, and the sweeps' model prices
#    each step on the link it crosses); on one machine between 2 ranks, the
#    others would only share its cores.
PP_NP=2
if [ -n "${MPIRUN:-}" ] && [ "$(echo $NP | tr ' ' '\n' | sort -n | tail -1)" -gt 2 ]; then
  PP_NP=$(echo $NP | tr ' ' '\n' | sort -n | tail -1)
fi
say "ping-pong at p=$PP_NP (alpha, beta: a pair inside a node, a pair between nodes where the ranks span them), local reduce (gamma), memcpy"
"${LAUNCH[@]}" -np "$PP_NP" "$BIN/collbench" --pingpong -b 8 -e "$PP_MAX" -f 4 \
    --csv "$OUT/pingpong.csv" --save-model "$OUT/params.txt" > "$OUT/pingpong.txt"
grep '^# fit' "$OUT/pingpong.txt" | sed 's/^# /             /'

# 1b. The same through the shm transport (its own alpha and beta: the model
#     column of the shm sweep). collbench exits 3 where it is not available.
SHM=0
if "${LAUNCH[@]}" -np 2 "$BIN/collbench" --transport shm --pingpong -b 8 -e "$PP_MAX" -f 4 \
      --save-model "$OUT/params_shm.txt" > "$OUT/pingpong_shm.txt" 2>&1 &&
   grep -q "transport shm" "$OUT/pingpong_shm.txt"; then
  SHM=1
  grep '^# fit' "$OUT/pingpong_shm.txt" | sed 's/^# fit/             shm fit/'
  # Every algorithm that runs on shm but the references (their time does not
  # depend on the transport: the MPI sweep has them).
  SHM_ALGOS=$("$BIN/collbench" --algo list | awk 'NR > 1 && /^[A-Za-z0-9_]/ && $2 ~ /host|shm/ && $3 != "(not" { printf "%s%s", sep, $1; sep = "," }')
elif grep -q "transport mpi" "$OUT/pingpong_shm.txt"; then
  say "shm sweeps skipped: asking for shm at 2 ranks gets the mpi transport (the ranks span nodes; see $OUT/pingpong_shm.txt)"
else
  say "shm transport not available here: shm sweep skipped (see $OUT/pingpong_shm.txt)"
fi

# The machine's load around the sweeps, for benchreport (load.txt): the cores,
# the 1-, 5- and 15-minute load averages before and after, and the most ranks
# the sweeps ran (their own share of the load after). A machine loaded by
# other work makes the summary's verdicts inconclusive rather than MET or
# MISSED from noise. No /proc/loadavg (not Linux): no load.txt, no judgement.
note_load() {   # note_load before|after
  local l1 l5 l15
  [ -r /proc/loadavg ] || return 0
  read -r l1 l5 l15 _ < /proc/loadavg
  [ "$1" = before ] && echo "cores $(nproc)" > "$OUT/load.txt"
  echo "$1 $l1 $l5 $l15" >> "$OUT/load.txt"
  [ "$1" = after ] && echo "ranks $(printf '%s\n' $NP | sort -n | tail -1)" >> "$OUT/load.txt"
  return 0
}
note_load before

# 2. The sweep at each rank count: every algorithm in the registry (mpi
#    included), then, on the shm transport, every algorithm that runs there.
#    In sweep.csv the shm rows are named NAME@shm, so the summary and the
#    plots show both transports side by side. Which transport a run asking
#    for shm gets is asked first (scripts/bench_transport.sh): where the
#    ranks span nodes shm falls back to MPI, and the sweep would only repeat
#    the MPI one under a wrong name; a transport of another kind (one that
#    mixes shm and MPI) is swept and filed under its own name.
TRANSPORT=scripts/bench_transport.sh
shm_at() {   # shm_at P: the transport a run asking for shm gets at P ranks
  "$TRANSPORT" probe "$1" "$BIN" "${LAUNCH[@]}" 2>> "$OUT/shm_probe.txt"
}
first=1
for p in $NP; do
  say "sweep p=$p: all algorithms, 8 B .. 64 MB"
  if ! "${LAUNCH[@]}" -np "$p" "$BIN/collbench" --algo all "${OPTS[@]}" -c 1 --model "$OUT/params.txt" \
        --csv "$OUT/sweep_p$p.csv" --json "$OUT/sweep_p$p.json" | tee "$OUT/sweep_p$p.txt" |
        awk '/^# Avg bus bandwidth/ { printf "             %s\n", substr($0, 3); fflush() }'; then
    failed "sweep p=$p reported a failure or wrong results: see $OUT/sweep_p$p.txt"
  fi
  if [ -s "$OUT/sweep_p$p.csv" ]; then
    if [ $first = 1 ]; then cat "$OUT/sweep_p$p.csv"; first=0; else tail -n +2 "$OUT/sweep_p$p.csv"; fi >> "$OUT/sweep.csv"
  fi
  [ $SHM = 1 ] || continue
  got=$(shm_at "$p")
  if [ "$got" = mpi ]; then
    say "shm sweep p=$p skipped: asking for shm at $p ranks gets the mpi transport (the ranks span nodes): the MPI sweep above has these algorithms"
    continue
  elif [ "$got" = none ]; then
    failed "shm sweep p=$p: a first call asking for shm did not run (see $OUT/shm_probe.txt)"
    continue
  fi
  say "sweep p=$p on the $got transport: $SHM_ALGOS"
  if ! "${LAUNCH[@]}" -np "$p" "$BIN/collbench" --transport shm --algo "$SHM_ALGOS" "${OPTS[@]}" -c 1 \
        --model "$OUT/params_shm.txt" --csv "$OUT/sweep_shm_p$p.csv" --json "$OUT/sweep_shm_p$p.json" |
        tee "$OUT/sweep_shm_p$p.txt" |
        awk '/^# Avg bus bandwidth/ { printf "             shm: %s\n", substr($0, 3); fflush() }'; then
    failed "shm sweep p=$p reported a failure or wrong results: see $OUT/sweep_shm_p$p.txt"
  fi
  [ -s "$OUT/sweep_shm_p$p.csv" ] || continue
  "$TRANSPORT" label "$OUT/sweep_shm_p$p.txt" "$OUT/sweep_shm_p$p.csv" $first >> "$OUT/sweep.csv" ||
    failed "shm sweep p=$p: no transport in $OUT/sweep_shm_p$p.txt: its rows are left out of sweep.csv"
  first=0
done
note_load after

# 2b. The two halves of the all-reduce as collectives of their own: every
#     reduce-scatter and all-gather algorithm (mpi included) at each rank
#     count, busbw with nccl-tests' factor (p-1)/p. Their tables go to
#     colls_pN.txt and the end of summary.md, their rows to colls.csv (the
#     algorithm named rs:NAME or ag:NAME).
for p in $NP; do
  for coll in reduce_scatter allgather; do
    tag=$([ $coll = reduce_scatter ] && echo rs || echo ag)
    say "$coll p=$p: all algorithms"
    if ! "${LAUNCH[@]}" -np "$p" "$BIN/collbench" --coll $coll --algo all "${OPTS[@]}" -c 1 --model "$OUT/params.txt" \
          --csv "$OUT/${tag}_p$p.csv" > "$OUT/${tag}_p$p.txt"; then
      failed "$coll sweep p=$p reported a failure or wrong results: see $OUT/${tag}_p$p.txt"
    fi
    [ -s "$OUT/${tag}_p$p.csv" ] || continue
    awk -F, -v OFS=, -v t=$tag -v hdr="$([ -s "$OUT/colls.csv" ] && echo 0 || echo 1)" \
        'NR == 1 { if (hdr) print; next } { $1 = t ":" $1; print }' "$OUT/${tag}_p$p.csv" >> "$OUT/colls.csv"
  done
done

# 3. A trace of the pipelined ring: the overlap of receive and reduce is
#    visible; and one of twoshot on shm: copy-in, barrier waits,
#    reduce-scatter, all-gather.
TP=$(echo $NP | tr ' ' '\n' | sort -n | tail -1); [ "$TP" -lt 2 ] && TP=2
say "trace: ring_pipelined, 4 MB, p=$TP"
"${LAUNCH[@]}" -np "$TP" "$BIN/collbench" --algo ring_pipelined -b 4M -e 4M -n 3 -w 1 -c 0 --place out \
    --model none --trace "$OUT/trace_ring_pipelined.json" > "$OUT/trace_ring_pipelined.txt" ||
    failed "trace failed (see $OUT/trace_ring_pipelined.txt)"
if [ $SHM = 1 ] && [ "$(shm_at "$TP")" != shm ]; then
  say "trace of twoshot on shm skipped: the ranks at p=$TP span nodes (twoshot needs every rank on one node)"
elif [ $SHM = 1 ]; then
  say "trace: twoshot on shm, 4 MB, p=$TP"
  "${LAUNCH[@]}" -np "$TP" "$BIN/collbench" --transport shm --algo twoshot -b 4M -e 4M -n 3 -w 1 -c 0 --place both \
      --model none --trace "$OUT/trace_twoshot_shm.json" > "$OUT/trace_twoshot_shm.txt" ||
      failed "trace failed (see $OUT/trace_twoshot_shm.txt)"
fi

# 4. GPU sweep, where there is a GPU and collbench was built with CUDA
#    (collbench exits 3 when --device cuda is unavailable). p = 1 is the
#    single-GPU baseline (nccl included). Ranks share the GPUs (local rank
#    modulo device count), so with more ranks than GPUs the ranks are
#    TIME-SHARED: their kernels and copies take turns on one device, which
#    measures the algorithms' overheads, not a multi-GPU interconnect — the
#    labels say so. nccl joins only where every rank has its own GPU (NCCL
#    < 2.30 refuses a shared one). The ceiling is the device-to-device copy
#    bandwidth.
GPU_NP=""
# gpu_setup P NGPU: how P ranks sit on NGPU GPUs, for progress lines, the CSV
# (column gpu_setup), the summary and the plot titles.
gpu_setup() {
  local p=$1 g=$2 s=""
  [ "$g" -gt 1 ] && s=s
  if [ "$p" -eq 1 ]; then echo "1 rank on 1 GPU"
  elif [ "$p" -le "$g" ]; then echo "$p ranks on $p GPUs"
  else echo "time-shared ($p ranks on $g GPU$s)"
  fi
}
# collbench --gpus counts the devices as the ranks will see them
# (CUDA_VISIBLE_DEVICES honoured): 0 with the count, 3 when there is none
# (or no CUDA in this build), 1 when a GPU is there and does not work: then
# CUDA's own message is shown and the run counts as failed.
probe=0; ngpu=$("$BIN/collbench" --gpus 2> "$OUT/gpu_probe.txt") || probe=$?
if [ $probe = 3 ]; then
  say "GPU sweep skipped: $(sed 's/^collbench: //' "$OUT/gpu_probe.txt" | head -1)"
elif [ $probe != 0 ]; then
  failed "GPU probe failed: $(sed 's/^collbench: //' "$OUT/gpu_probe.txt" | head -3 | tr '\n' ' ')"
else
  say "GPU: $ngpu device(s) visible${CUDA_VISIBLE_DEVICES+ (CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES)}"
  if "${LAUNCH[@]}" -np 1 "$BIN/collbench" --device cuda --algo ring -b 8 -e 8 -n 1 -w 0 -c 0 --model none \
       > "$OUT/gpu_first_call.txt" 2>&1; then
    GPU_NP=${BENCH_GPU_NP:-"1 2 4"}
    say "GPU: ping-pong between 2 ranks, $(gpu_setup 2 "$ngpu"), and device copy bandwidth"
    "${LAUNCH[@]}" -np 2 "$BIN/collbench" --device cuda --pingpong -b 8 -e 64M -f 4 \
        --save-model "$OUT/params_gpu.txt" > "$OUT/pingpong_gpu.txt" || failed "GPU ping-pong failed"
    first=1
    for p in $GPU_NP; do
      algos=$("$BIN/collbench" --algo list | awk -v skip="$([ "$ngpu" -lt "$p" ] && echo nccl)" \
              'NR > 1 && /^[A-Za-z0-9_]/ && $2 ~ /cuda/ && $1 != skip { printf "%s%s", sep, $1; sep = "," }')
      setup=$(gpu_setup "$p" "$ngpu")
      say "GPU sweep p=$p, $setup: $algos"
      "${LAUNCH[@]}" -np "$p" "$BIN/collbench" --device cuda --algo "$algos" "${OPTS[@]}" -c 1 --model none \
          --csv "$OUT/sweep_gpu_p$p.csv" --json "$OUT/sweep_gpu_p$p.json" > "$OUT/sweep_gpu_p$p.txt" ||
          failed "GPU sweep p=$p reported a failure or wrong results: see $OUT/sweep_gpu_p$p.txt"
      [ -s "$OUT/sweep_gpu_p$p.csv" ] || continue
      # The setup as a last column: the plot scripts read columns by number.
      awk -v s="$setup" 'NR == 1 { print $0 ",gpu_setup"; next } { print $0 "," s }' \
          "$OUT/sweep_gpu_p$p.csv" > "$OUT/sweep_gpu_p$p.csv.tmp" && mv "$OUT/sweep_gpu_p$p.csv.tmp" "$OUT/sweep_gpu_p$p.csv"
      if [ $first = 1 ]; then cat "$OUT/sweep_gpu_p$p.csv"; first=0; else tail -n +2 "$OUT/sweep_gpu_p$p.csv"; fi >> "$OUT/sweep_gpu.csv"
    done
  else
    failed "GPU sweep skipped: a first device all-reduce failed: $(grep -v '^#' "$OUT/gpu_first_call.txt" | tail -3 | tr '\n' ' ')"
  fi
fi

# 5. The model beyond this machine.
say "model extrapolation to 4096 ranks"
"$BIN/collbench" --extrapolate --model "$OUT/params.txt" --csv "$OUT/extrap.csv" > "$OUT/extrap.txt"

# 6. The trainer, when its part of the kit provides a benchmark script.
if [ -x scripts/bench_trainer.sh ]; then
  say "trainer scaling (scripts/bench_trainer.sh)"
  scripts/bench_trainer.sh "$BUILD" "$OUT" || failed "trainer benchmark failed (see $OUT/trainer_*.txt)"
fi

# 6b. Sharded training: replicated DP against ZeRO-1 and ZeRO-2 (tagtrain
#     --zero 1, --zero 2 in its default 4 MiB buckets) on tagsynth data, one
#     run each at the largest p: step time, per-rank memory as tagtrain holds
#     it between steps (parameters, gradients, optimizer state) and as
#     measured (peak resident memory, the largest rank's; the gradients
#     resident after training: what stays between steps), bytes each rank
#     sends per step (--zero: measured; replicated: the ring's 2(p-1)/p of
#     the buffer, what it sends).
if [ -x "$BIN/tagsynth" ] && [ -x "$BIN/tagtrain" ]; then
  say "sharded training: replicated vs --zero 1 and --zero 2 at p=$TP"
  ZE=$([ "$MODE" = smoke ] && echo 1 || echo 3) ZF=$([ "$MODE" = smoke ] && echo 4096 || echo 32768)
  ( "$BIN/tagsynth" --rows 2000 --seed 1 --out "$OUT/zero_data.csv" > /dev/null || exit 1
  echo "mode,p,step_s,compute_per_step_s,comm_per_step_s,param_bytes,grad_bytes,optim_state_bytes,peak_rss_bytes,grad_resident_bytes,sent_bytes_per_step"
  for z in 0 1 2; do
    "${LAUNCH[@]}" -np "$TP" "$BIN/tagtrain" --data "$OUT/zero_data.csv" --folds 5 --fold 5 --features "$ZF" \
        --hidden 64 --epochs "$ZE" --no-save --quiet --algo ring --transport mpi --zero $z --log "$OUT/zero$z.log" \
        > "$OUT/zero$z.txt" 2>&1 || exit 1
    f() { grep "\"type\":\"$1\"" "$OUT/zero$z.log" | sed "s/.*\"$2\":\([^,}]*\).*/\1/"; }
    cps=$(f summary compute_per_step_s) mps=$(f summary comm_per_step_s)
    if [ $z = 0 ]; then
      sent=$(awk -v b="$(f run gradient_bytes)" -v p="$TP" 'BEGIN { printf "%.0f", 2 * (p - 1) / p * b }')
    else
      sent=$(f step sent_bytes | awk '{ s += $1; n++ } END { printf "%.0f", n ? s / n : 0 }')
    fi
    echo "$([ $z = 0 ] && echo replicated || echo zero$z),$TP,$(awk -v a="$cps" -v b="$mps" 'BEGIN { print a + b }'),$cps,$mps,$(f run param_bytes_per_rank),$(f run grad_bytes_per_rank),$(f run optim_state_bytes_per_rank),$(f summary peak_rss_bytes),$(f summary grad_resident_bytes),$sent"
  done ) > "$OUT/zero.csv" || failed "sharded training benchmark failed (see $OUT/zero0.txt .. zero2.txt)"
fi

# 7. Summary and plots.
say "summary and plots"
"$BIN/benchreport" --dir "$OUT" --info "Run $STAMP on $(hostname), $(nproc) cores, mode $MODE, ranks $NP; $(mpirun --version 2>/dev/null | head -1)."
if command -v gnuplot >/dev/null 2>&1; then
  PNGTERM=png
  gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo && PNGTERM=pngcairo
  ALGOS=$(tail -n +2 "$OUT/sweep.csv" | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
  XALGOS=$(tail -n +2 "$OUT/extrap.csv" | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
  MEMCPY=$(awk '$1 == "memcpy_gbs" { print $2 }' "$OUT/params.txt")
  ALPHA=$(awk '$1 == "alpha_us" { print $2 }' "$OUT/params.txt")
  BETA=$(awk '$1 == "beta_ns_per_byte" { print $2 }' "$OUT/params.txt")
  plot() {   # plot SCRIPT [extra -e]
    for fmt in png svg; do
      gnuplot -e "dir='$OUT'; fmt='$fmt'; pngterm='$PNGTERM'; algos='$ALGOS'; memcpy=$MEMCPY; alpha_us=$ALPHA; beta_ns=$BETA" \
              ${2:+-e "$2"} "plots/$1.gp" 2>>"$OUT/gnuplot.log" || failed "plot $1 failed (see $OUT/gnuplot.log)"
    done
  }
  for p in $NP; do
    plot busbw "p=$p"; plot latency "p=$p"; plot model "p=$p"
  done
  if [ -s "$OUT/sweep_gpu.csv" ]; then
    GALGOS=$(tail -n +2 "$OUT/sweep_gpu.csv" | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
    D2D=$(awk '$1 == "memcpy_gbs" { print $2 }' "$OUT/params_gpu.txt" 2>/dev/null)
    for p in $GPU_NP; do
      ALGOS=$GALGOS MEMCPY=${D2D:-0} plot busbw "p=$p; csv='sweep_gpu.csv'; tag='gpu_'; ceiling='device copy'; setup='$(gpu_setup "$p" "$ngpu")'"
    done
  fi
  plot pingpong
  [ "$(echo $NP | wc -w)" -gt 1 ] && plot scaling
  ALGOS=$XALGOS plot extrapolation
  # benchreport links only the plots that exist: run it again now they do.
  "$BIN/benchreport" --dir "$OUT" --info "Run $STAMP on $(hostname), $(nproc) cores, mode $MODE, ranks $NP; $(mpirun --version 2>/dev/null | head -1)."
else
  say "gnuplot not found: CSV and summary only (scripts/deps.sh installs gnuplot-nox)"
fi
[ -s "$OUT/gnuplot.log" ] || rm -f "$OUT/gnuplot.log"

# The GPU results, appended to the summary (benchreport covers the host sweep).
if [ -s "$OUT/sweep_gpu.csv" ]; then
  {
    echo
    echo "## GPU (CUDA IPC transport, one process per rank, $ngpu GPU(s))"
    echo
    echo "Ranks share the GPUs round-robin. Where there are more ranks than GPUs they are"
    echo "*time-shared*: their kernels and copies take turns on one device, so those rows"
    echo "measure the algorithms' overheads, not a multi-GPU interconnect."
    echo
    awk '$1 == "memcpy_gbs" { printf "Device-to-device copy bandwidth (the ceiling line): %s GB/s.\n\n", $2 }' "$OUT/params_gpu.txt" 2>/dev/null
    for p in $GPU_NP; do
      [ -s "$OUT/sweep_gpu_p$p.txt" ] || continue
      echo "### p = $p: $(gpu_setup "$p" "$ngpu")"
      echo
      [ -f "$OUT/busbw_gpu_p$p.png" ] && echo "![busbw_gpu_p$p](busbw_gpu_p$p.png)" && echo
      echo '```'
      cat "$OUT/sweep_gpu_p$p.txt"
      echo '```'
    done
  } >> "$OUT/summary.md"
fi

# Reduce-scatter, all-gather and sharded training, appended to the summary.
if [ -s "$OUT/colls.csv" ] || [ -s "$OUT/zero.csv" ]; then
  {
    echo
    echo "## Reduce-scatter and all-gather"
    echo
    echo "The two halves of the ring all-reduce as collectives of their own (collbench --coll;"
    echo "busbw = algbw * (p-1)/p, size = the whole buffer). Rows in colls.csv (rs:NAME, ag:NAME)."
    for p in $NP; do
      for tag in rs ag; do
        [ -s "$OUT/${tag}_p$p.txt" ] || continue
        echo
        echo '```'
        grep -v '^#$' "$OUT/${tag}_p$p.txt"
        echo '```'
      done
    done
    if [ -s "$OUT/zero.csv" ]; then
      echo
      echo "## Sharded training (tagtrain --zero 1 and --zero 2)"
      echo
      echo "Replicated data parallelism against ZeRO stages 1 and 2 on tagsynth data (32768 features, 64 hidden"
      echo "units; 4096 features with BENCH=smoke); seconds per step and bytes per rank (zero.csv): the memory"
      echo "held between steps, the peak resident memory and the gradients resident after training measured,"
      echo "the bytes sent per step:"
      echo
      echo "| mode | p | step s | compute s | comm s | parameters B | gradients B | optimizer state B | peak RSS B | gradients resident B | sent B/step |"
      echo "|---|---|---|---|---|---|---|---|---|---|---|"
      tail -n +2 "$OUT/zero.csv" | awk -F, '{ printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n" }'
    fi
  } >> "$OUT/summary.md"
fi

say "done: $OUT/summary.md"
sed -n '/^## Performance targets/,/^A missed target/p' "$OUT/summary.md" | grep '^- \|^  ' || true
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "bench: ${#FAILED[@]} step(s) failed; their figures are missing from the results:" >&2
  printf '  %s\n' "${FAILED[@]}" >&2
  exit 1
fi
