#!/usr/bin/env bash
# bench_trainer.sh BUILD OUTDIR — trainer scaling for `make bench` (called by scripts/bench.sh).
#
# Runs tagtrain on the real data at p = 1, 2, 4 with every host algorithm in the
# registry on the mpi transport, all-reducing the whole gradient buffer every
# step, once more with ring and --sparse-grads (the touched-rows optimisation,
# labelled ring-sparse), and with twoshot on the shm transport (twoshot@shm:
# tagtrain's default, --algo auto, on one node); p = 1 runs once: there is no
# all-reduce to choose. TRAINER_ALGOS, TRAINER_NP ("2 4"), TRAINER_EPOCHS (3) and
# TRAINER_LOCAL_BATCH (16) change what runs. A run that fails is a NaN row,
# listed in OUTDIR/trainer_failed.txt, and the script exits 1. Writes
#   OUTDIR/trainer.csv              algo,p,samples_per_s,efficiency,comm_fraction,allreduce_bytes_per_step
#   OUTDIR/trainer_ceiling.txt      the same efficiency for p independent 1-rank runs
#   OUTDIR/trainer_scaling.png/.svg samples/s and efficiency against p
# and, where collbench --gpus counts a usable GPU and tagtrain runs --device
# cuda, the same on the GPU (device_trainer below): every algorithm that takes
# device buffers (TRAINER_GPU_ALGOS), nccl the reference line, at p = 1 and
# TRAINER_NP; ranks beyond the GPU count time-share the GPUs (local rank
# modulo device count: the plot's title says so) and nccl is left out there
# unless NCCL_MULTI_RANK_GPU_ENABLE=1 (NCCL refuses a shared GPU otherwise):
#   OUTDIR/trainer_gpu.csv          algo,p,samples_per_s,efficiency,comm_fraction,allreduce_bytes_per_step,gpu_setup
#   OUTDIR/trainer_scaling_gpu.png/.svg
# and the parallel plans at p = 4 (scripts/bench_plans.sh, about 35 s):
#   OUTDIR/plans.csv                plan,p,tp,pp,dp,step_s,...,peak_rss_bytes,coll_bytes_per_step
#
# Efficiency is WEAK scaling, with the same per-rank work at every p:
#   every rank keeps a local batch of LOCAL_BATCH rows (global --batch =
#   p x LOCAL_BATCH), runs ONE OpenBLAS thread (--threads 1, also at p = 1),
#   and does the same forward/backward and the same full optimizer update per
#   step; only the all-reduce is added. samples/s is tagtrain's steady rate:
#   samples per second of training steps in the epochs after the first (data
#   loading, featurising, the per-epoch validation and the first epoch's
#   warm-up are outside it; see summary_of).
#     efficiency(p) = samples/s(p) / (p * samples/s(1))
# LOCAL_BATCH defaults to 16, the per-rank batch of the default model at
# p = 2 (global batch 32). The ceiling file runs p copies of the 1-rank job at
# once with no communication at all: what sharing the cores and the memory
# bus alone costs, an upper bound for any all-reduce. On a machine with fewer
# cores than ranks (p = 4 on 2 cores) it measures oversubscription as much as
# communication. About 60-90 s on 2 cores.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-bench-results/latest}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=$BUILD/bin
[ -x "$BIN/tagtrain" ] || { echo "bench_trainer: $BIN/tagtrain not found: build first" >&2; exit 1; }
# The settings, checked before anything runs or is written: whole numbers,
# the rank counts from 2 to 4096 and each once (p = 1 is the base every
# efficiency is taken against, run anyway).
whole() {   # whole NAME VALUE LO HI
  case $2 in
    ''|*[!0-9]*|0?*) echo "bench_trainer: $1='$2': want a whole number from $3 to $4" >&2; exit 2 ;;
  esac
  if [ ${#2} -gt ${#4} ] || [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
    echo "bench_trainer: $1='$2': want a whole number from $3 to $4" >&2; exit 2
  fi
}
whole TRAINER_LOCAL_BATCH "${TRAINER_LOCAL_BATCH:-16}" 1 65536
whole TRAINER_EPOCHS "${TRAINER_EPOCHS:-3}" 1 10000
tnp=${TRAINER_NP:-2 4} seen=" "
[ -n "${tnp//[[:space:]]/}" ] ||
  { echo "bench_trainer: TRAINER_NP holds only white space: give rank counts, e.g. TRAINER_NP=\"2 4\"" >&2; exit 2; }
for v in $tnp; do
  whole "TRAINER_NP (one of '$tnp')" "$v" 2 4096
  case $seen in *" $v "*) echo "bench_trainer: TRAINER_NP='$tnp': $v is given twice" >&2; exit 2 ;; esac
  seen="$seen$v "
done
mkdir -p "$OUT"
rm -f "$OUT/trainer_ceiling.txt" "$OUT"/trainer_indep_p*.jsonl "$OUT/trainer_failed.txt"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The launcher: $MPIRUN when set (scripts/bench.sh says how), else one machine's.
if [ -n "${MPIRUN:-}" ]; then
  # shellcheck disable=SC2206  # one word per option, as typed
  LAUNCH=($MPIRUN)
else
  LAUNCH=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 --mca btl self,vader)
fi
LOCAL_BATCH=${TRAINER_LOCAL_BATCH:-16}
EPOCHS=${TRAINER_EPOCHS:-3}
NPS=${TRAINER_NP:-"2 4"}
T0=$(date +%s)
say() { printf '[trainer %4ds] %s\n' $(( $(date +%s) - T0 )) "$*"; }

# "samples_per_s comm_fraction bytes_per_step" of one run's JSON-lines log.
# samples/s is the steady rate, over the epochs after the first: the first
# pays the warm-up (page faults; on a GPU the CUDA context, cuBLAS, the IPC
# mappings: most of the first epoch on an H100), which would flatter every
# p > 1 against p = 1, as nccl-tests' warm-up iterations are left out.
summary_of() {
  grep '"type":"summary"' "$1" | sed -e 's/.*"samples_per_s":[^,]*,"comm_fraction":\([0-9.e+-]*\).*"allreduce_bytes_per_step":\([0-9.e+-]*\).*"steady_samples_per_s":\([0-9.e+-]*\).*/\3 \1 \2/'
}
# One run; prints summary_of's line.
# The label ring-sparse is ring with --sparse-grads; NAME@shm is NAME on the
# shm transport (twoshot@shm: tagtrain's default on one node).
run() {
  local p=$1 label=$2 algo=${2%-sparse} extra=
  [ "$label" != "$algo" ] && extra=--sparse-grads
  [ "$algo" != "${algo%@shm}" ] && { algo=${algo%@shm}; extra="--transport shm"; }
  local log="$OUT/trainer_${label}_p$p.jsonl"
  rm -f "$log"
  "${LAUNCH[@]}" -np "$p" "$BIN/tagtrain" --algo "$algo" $extra --batch $((LOCAL_BATCH * p)) --epochs "$EPOCHS" \
      --threads 1 --no-save --quiet --log "$log" > "$OUT/trainer_${label}_p$p.txt" 2>&1 ||
      { echo "NaN NaN NaN"; echo "p=$p $label: $OUT/trainer_${label}_p$p.txt" >> "$OUT/trainer_failed.txt"; return; }
  summary_of "$log"
}

algos=${TRAINER_ALGOS:-"$("$BIN/tagtrain" --algo list | awk 'NR > 1 && $2 ~ /host/ { print $1 }') ring-sparse twoshot@shm"}
say "p=1 (no all-reduce), local batch $LOCAL_BATCH, $EPOCHS epochs"
read -r s1 c1 b1 < <(run 1 ring)
echo "algo,p,samples_per_s,efficiency,comm_fraction,allreduce_bytes_per_step" > "$OUT/trainer.csv"
for a in $algos; do echo "$a,1,$s1,1.000,$c1,$b1" >> "$OUT/trainer.csv"; done
for p in $NPS; do
  # NAME@shm only where a run asking for shm gets it: where the ranks span
  # nodes shm falls back to MPI (and twoshot, which needs one node, is refused).
  shm_got=$(scripts/bench_transport.sh probe "$p" "$BIN" "${LAUNCH[@]}" 2>/dev/null)
  for a in $algos; do
    if [ "$a" != "${a%@shm}" ] && [ "$shm_got" != shm ]; then
      say "p=$p $a skipped: asking for shm at $p ranks gets transport $shm_got (the ranks span nodes)"
      continue
    fi
    read -r s c b < <(run "$p" "$a")
    eff=$(awk -v s="$s" -v s1="$s1" -v p="$p" 'BEGIN { printf "%.3f", (s1 > 0 ? s / (p * s1) : 0) }')
    echo "$a,$p,$s,$eff,$c,$b" >> "$OUT/trainer.csv"
    say "p=$p $a: $s samples/s, efficiency $eff, comm fraction $c, $b bytes all-reduced a step"
  done
done

# Ceiling: p independent 1-rank runs at once (no communication), seeds differ.
for p in $NPS; do
  pids=()
  for r in $(seq 1 "$p"); do
    "$BIN/tagtrain" --batch "$LOCAL_BATCH" --epochs "$EPOCHS" --threads 1 --seed "$r" --no-save --quiet \
        --log "$OUT/trainer_indep_p${p}_$r.jsonl" > /dev/null 2>&1 & pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || true; done
  tot=$(for f in "$OUT"/trainer_indep_p"${p}"_*.jsonl; do summary_of "$f"; done | awk '{ s += $1 } END { print s + 0 }')
  ceil=$(awk -v s="$tot" -v s1="$s1" -v p="$p" 'BEGIN { printf "%.3f", (s1 > 0 ? s / (p * s1) : 0) }')
  echo "p=$p independent 1-rank runs: $tot samples/s in all, efficiency ceiling $ceil" >> "$OUT/trainer_ceiling.txt"
  say "p=$p ceiling (independent runs, no all-reduce): $ceil"
done

# The trainer on the GPU, where there is one: its own CSV and plot, the same
# weak scaling (local batch, epochs, rank counts) with device algorithms.
device_trainer() {
  local ngpu p a setup s c b eff dalgos
  if ! ngpu=$("$BIN/collbench" --gpus 2> "$OUT/trainer_gpu_probe.txt"); then
    say "GPU trainer skipped: $(sed 's/^collbench: //' "$OUT/trainer_gpu_probe.txt" | head -1)"
    return 0
  fi
  # nccl first: the reference every other line is read against.
  dalgos=${TRAINER_GPU_ALGOS:-"$("$BIN/tagtrain" --algo list |
      awk 'NR > 1 && $2 ~ /cuda/ { if ($1 == "nccl") first = $1; else rest = rest " " $1 } END { print first rest }')"}
  dalgos=$(echo $dalgos)
  run_device() {   # run_device P ALGO: "samples_per_s comm_fraction bytes_per_step"
    local log="$OUT/trainer_gpu_${2}_p$1.jsonl"
    rm -f "$log"
    "${LAUNCH[@]}" -np "$1" "$BIN/tagtrain" --device cuda --algo "$2" --batch $((LOCAL_BATCH * $1)) --epochs "$EPOCHS" \
        --threads 1 --no-save --quiet --log "$log" > "$OUT/trainer_gpu_${2}_p$1.txt" 2>&1 ||
        { echo "NaN NaN NaN"; echo "GPU p=$1 $2: $OUT/trainer_gpu_${2}_p$1.txt" >> "$OUT/trainer_failed.txt"; return; }
    summary_of "$log"
  }
  setup_of() { [ "$1" -le "$ngpu" ] && echo "$1 rank(s) on $1 GPU(s)" || echo "time-shared: $1 ranks on $ngpu GPU(s)"; }
  say "GPU trainer: $ngpu GPU(s), p=1 (no all-reduce), local batch $LOCAL_BATCH, $EPOCHS epochs: $dalgos"
  local s1 c1 b1
  read -r s1 c1 b1 < <(run_device 1 ring)
  echo "algo,p,samples_per_s,efficiency,comm_fraction,allreduce_bytes_per_step,gpu_setup" > "$OUT/trainer_gpu.csv"
  for a in $dalgos; do echo "$a,1,$s1,1.000,$c1,$b1,$(setup_of 1)" >> "$OUT/trainer_gpu.csv"; done
  local shared="$ngpu GPU(s), one rank each; nccl (thick) is the reference"
  for p in $NPS; do
    setup=$(setup_of "$p")
    [ "$p" -gt "$ngpu" ] && shared="p > $ngpu: the ranks time-share $ngpu GPU(s); nccl (thick) is the reference"
    for a in $dalgos; do
      if [ "$a" = nccl ] && [ "$p" -gt "$ngpu" ] && [ "${NCCL_MULTI_RANK_GPU_ENABLE:-}" != 1 ]; then
        say "GPU p=$p nccl: left out ($setup: NCCL refuses ranks that share a GPU)"
        continue
      fi
      read -r s c b < <(run_device "$p" "$a")
      eff=$(awk -v s="$s" -v s1="$s1" -v p="$p" 'BEGIN { printf "%.3f", (s1 > 0 ? s / (p * s1) : 0) }')
      echo "$a,$p,$s,$eff,$c,$b,$setup" >> "$OUT/trainer_gpu.csv"
      say "GPU p=$p $a ($setup): $s samples/s, efficiency $eff, comm fraction $c"
    done
  done
  if command -v gnuplot > /dev/null; then
    for fmt in png svg; do
      gnuplot -e "dir='$OUT'; fmt='$fmt'; pngterm='$term'; algos='$dalgos'; csv='trainer_gpu.csv'; tag='_gpu'; setup='$shared'" \
          plots/trainer_scaling.gp || say "gnuplot failed for the GPU trainer plot ($fmt)"
    done
  fi
  say "wrote $OUT/trainer_gpu.csv and trainer_scaling_gpu.png/.svg"
}

# The trainer's own path at p = 2 (issue 38): where a step's time goes, and
# the trainer's collective against collbench's figure for the same calls.
# tagtrain's default (twoshot on shm, in place), --breakdown, dense and with
# 4 MiB buckets; then collbench times the same calls (the same algorithm,
# transport, in place, with the per-call agreement the trainer's calls make)
# in the same bench run. Every figure is a median over rank 0's steps of the
# epochs after the first (the log's step records), and its quartiles. Writes
#   OUTDIR/trainer_path.csv  mode,algo,transport,p,bytes_per_step,calls,fb_s,wait_s,comm_s,calls_entry_s,calls_s,
#                            calls_q1_s,calls_q3_s,optimizer_s,step_s,collbench_s,collbench_q1_s,collbench_q3_s
# (comm_s: the collective as the step waited for it, with buckets what backward
# did not hide; calls_entry_s: the calls' wait for the last rank to start
# them; calls_s: the calls from then to their end (the log's calls_proper_s),
# the figure set beside collbench's, which starts its calls together)
#   OUTDIR/trainer_ddp.txt   DDP's side of the breakdown, or why it was not measured
# TRAINER_PATH=0 leaves it out.
# "median q1 q3" of a step-record field over the epochs after the first.
step_quartiles() {   # step_quartiles LOG FIELD
  grep '"type":"step"' "$1" | sed -n "s/.*\"epoch\":\([0-9]*\),.*\"$2\":\([0-9.e+-]*\).*/\1 \2/p" |
    awk '$1 > 1 { print $2 }' | sort -g |
    awk '{ v[NR] = $1 } function q(f,  i) { i = int(f * (NR - 1)) + 1; return v[i] }
         END { if (NR) printf "%.9g %.9g %.9g\n", q(0.5), q(0.25), q(0.75); else print "NaN NaN NaN" }'
}
# collbench's "time q1 q3" in seconds for one in-place call of BYTES.
collbench_call() {   # collbench_call BYTES CSV
  rm -f "$2"
  "${LAUNCH[@]}" -np 2 "$BIN/collbench" --transport shm --algo twoshot --place in --agree on --model none \
      --minbytes "$1" --maxbytes "$1" -n 50 -w 5 --csv "$2" > "$2.txt" 2>&1 || { echo "NaN NaN NaN"; return; }
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
           { printf "%.9g %.9g %.9g\n", $c["time_us"] / 1e6, $c["q1_us"] / 1e6, $c["q3_us"] / 1e6; exit }' "$2"
}
trainer_path() {
  local mode log bytes calls fb wait cm ce ca c1 c3 opt st cb b1 b3 full rem r0 r1 r3
  local csv="$OUT/trainer_path.csv" bucket=$((4 * 1048576))
  echo "mode,algo,transport,p,bytes_per_step,calls,fb_s,wait_s,comm_s,calls_entry_s,calls_s,calls_q1_s,calls_q3_s,optimizer_s,step_s,collbench_s,collbench_q1_s,collbench_q3_s" > "$csv"
  for mode in dense bucketed; do
    log="$OUT/trainer_path_$mode.jsonl"
    rm -f "$log"
    local how=()
    [ $mode = bucketed ] && how=(--bucket-mb 4)
    if ! "${LAUNCH[@]}" -np 2 "$BIN/tagtrain" --algo twoshot --transport shm --batch $((LOCAL_BATCH * 2)) \
        --epochs "$EPOCHS" --threads 1 --no-save --quiet --breakdown "${how[@]}" \
        --log "$log" > "$OUT/trainer_path_$mode.txt" 2>&1; then
      echo "path $mode: $OUT/trainer_path_$mode.txt" >> "$OUT/trainer_failed.txt"
      continue
    fi
    bytes=$(sed -n 's/.*"type":"run".*"gradient_bytes":\([0-9]*\).*/\1/p' "$log")
    read -r fb _ _ < <(step_quartiles "$log" fb_s)
    read -r wait _ _ < <(step_quartiles "$log" wait_s)
    read -r cm _ _ < <(step_quartiles "$log" comm_s)
    read -r ce _ _ < <(step_quartiles "$log" calls_entry_s)
    read -r ca c1 c3 < <(step_quartiles "$log" calls_proper_s)
    read -r opt _ _ < <(step_quartiles "$log" optimizer_s)
    read -r st _ _ < <(step_quartiles "$log" step_s)
    # The same calls: one of the whole buffer, or the buckets (4 MiB each
    # and the remainder: the slice at the buffer's start).
    if [ $mode = dense ]; then
      calls=1
      read -r cb b1 b3 < <(collbench_call "$bytes" "$OUT/trainer_path_collbench_$bytes.csv")
    else
      full=$((bytes / bucket)) rem=$((bytes % bucket)) calls=$(( (bytes + bucket - 1) / bucket ))
      read -r cb b1 b3 < <(collbench_call "$bucket" "$OUT/trainer_path_collbench_$bucket.csv")
      read -r cb b1 b3 < <(awk -v t="$cb" -v a="$b1" -v b="$b3" -v n="$full" 'BEGIN { print t * n, a * n, b * n }')
      if [ "$rem" -gt 0 ]; then
        read -r r0 r1 r3 < <(collbench_call "$rem" "$OUT/trainer_path_collbench_$rem.csv")
        read -r cb b1 b3 < <(awk -v t="$cb" -v a="$b1" -v b="$b3" -v x="$r0" -v y="$r1" -v z="$r3" \
            'BEGIN { print t + x, a + y, b + z }')
      fi
    fi
    echo "$mode,twoshot,shm,2,$bytes,$calls,$fb,$wait,$cm,$ce,$ca,$c1,$c3,$opt,$st,$cb,$b1,$b3" >> "$csv"
    say "path $mode (medians, s): step $st: fb $fb, wait $wait, collective $cm, optimizer $opt; the calls: waiting for the last rank $ce, then $ca; collbench $cb ($calls call(s))"
  done
  if python3 -c 'import torch' > /dev/null 2>&1; then
    echo "not measured: trainer/compare_ddp.py does not time DDP's step by parts yet" > "$OUT/trainer_ddp.txt"
  else
    echo "not measured: no PyTorch" > "$OUT/trainer_ddp.txt"
  fi
}
if [ "${TRAINER_PATH:-1}" != 0 ]; then
  if [ "$(scripts/bench_transport.sh probe 2 "$BIN" "${LAUNCH[@]}" 2>/dev/null)" = shm ]; then trainer_path
  else say "trainer path skipped: 2 ranks asking for shm do not get it (the ranks span nodes)"; fi
fi

term=png
command -v gnuplot > /dev/null && gnuplot -e "set terminal pngcairo" > /dev/null 2>&1 && term=pngcairo
if command -v gnuplot > /dev/null; then
  for fmt in png svg; do
    gnuplot -e "dir='$OUT'; fmt='$fmt'; pngterm='$term'; algos='$(echo $algos)'" plots/trainer_scaling.gp ||
      say "gnuplot failed for $fmt"
  done
fi
say "wrote $OUT/trainer.csv and trainer_scaling.png/.svg"
device_trainer
# The parallel plans side by side at p = 4 (DP, ZeRO-2, TP, PP): plans.csv.
scripts/bench_plans.sh "$BUILD" "$OUT" ||
  echo "plans: $OUT/plans_failed.txt" >> "$OUT/trainer_failed.txt"
# A run that failed is a NaN row in trainer.csv, listed here, and exit 1.
if [ -s "$OUT/trainer_failed.txt" ]; then
  say "$(wc -l < "$OUT/trainer_failed.txt") run(s) failed:"; sed 's/^/  /' "$OUT/trainer_failed.txt"
  exit 1
fi
