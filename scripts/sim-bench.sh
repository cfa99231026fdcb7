#!/usr/bin/env bash
# sim-bench.sh BUILD — what `make sim-bench` runs: collkit's algorithms on
# clusters this machine cannot be, simulated by SimGrid's SMPI (sim/README.md).
#
#   make sim-bench              the default run (under 15 minutes on 2 cores)
#   make sim-bench SIM=full     finer size steps, p = 256 on every algorithm at
#                               every size, the fat trees at 256 too, the
#                               trainer with every host algorithm
#   SIM_JOBS=4 make sim-bench   simulations run side by side (default: the cores)
#   SIM=smoke                   every step once at its smallest (p = 16, two
#                               algorithms, sizes to 64 KB, the trainer at
#                               p = 1, 2, --zero at p = 2): a minute, what the test suite runs
#                               (sim.bench.smoke) so that no step rots unseen
#   SIM_OUT=DIR                 results into DIR (a new folder) instead of
#                               bench-results/sim-<date-time>/
#
# The programs are the unmodified collbench and tagtrain, compiled with smpicc
# in build-smpi/ (cmake/smpi.cmake) and run by sim/simrun on the platforms in
# sim/platforms/. Time is SIMULATED: the same run gives the same figures on
# any machine; how long it takes here depends only on the messages simulated.
#
# Everything goes into ONE new folder, bench-results/sim-<date-time>/ (the
# same layout as `make bench`; bench-results/sim-latest points at it). A
# simulation that fails is listed in failed.txt; the report is still written,
# and the script then exits 1:
#   summary.md                  acceptance checks (PASS/FAIL with the figures),
#                               ratios to SMPI's MPI_Allreduce, the fastest
#                               algorithm by size and p, model vs simulation,
#                               the fat trees, the trainer
#   platform.txt                the simulated cluster of the sweeps
#   pingpong.csv/.txt, params.txt   ping-pong on it: alpha and beta recovered
#   sweep.csv, sweep_pN_ALGO.{csv,txt}   collbench per rank count and algorithm
#   topology.csv                the same algorithms on the fat trees (column platform)
#   nodes.csv, node_pN_ALGO.*   flat algorithms against the hierarchical all-reduce (hier:INTRA/INTER,
#                               where the registry has it) on clusters of nodes of 8 hosts (fat links
#                               inside a node, one thinner uplink per node; sim/platforms/nodes8-N.xml,
#                               written into platforms/ above 64 hosts), the ranks told the node size
#                               (COLLKIT_RANKS_PER_NODE=8); params_nodes.txt: both links, recovered
#   trainer.csv                 simulated tagtrain: samples/s and efficiency, p = 1 .. 64
#   zero.csv, zeroZ_pN.*        simulated tagtrain replicated, --zero 1, --zero 2 at p = 16, 64, 256:
#                               step time, bytes per rank held and sent per step
#   plans.csv, plans_setup.txt, plan_NAME_pN.*   simulated tagtrain under each parallel plan (DP, ZeRO-2,
#                               --tp 2, --pp 2 1F1B and GPipe, the hybrid where tagtrain takes it) at
#                               p = 16, 64 (full: 256 too; smoke: 4): step time, bytes per rank
#   colls.csv, rs_pN_ALGO.*, ag_pN_ALGO.*   reduce-scatter and all-gather per rank count and algorithm
#   extrap.csv, scaling.csv     the model to 4096 ranks; speedup/efficiency
#   *.png, *.svg                busbw, latency, model per p; topology; trainer; ...
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SBUILD=${SIM_BUILD:-build-smpi}
MODE=${SIM:-quick}
JOBS=${SIM_JOBS:-$(nproc 2>/dev/null || echo 2)}
case "$MODE" in quick|full|smoke) ;; *) echo "sim-bench: SIM must be quick, full or smoke (got '$MODE')" >&2; exit 2 ;; esac
case "$JOBS" in ''|*[!0-9]*|0) echo "sim-bench: SIM_JOBS must be a number >= 1" >&2; exit 2 ;; esac

T0=$(date +%s)
say() { printf '[sim-bench %4ds] %s\n' $(( $(date +%s) - T0 )) "$*"; }

# 1. SimGrid (installed like the rest of the dependencies; as a non-root user
#    the exact apt command is printed), then the simulated build. benchreport
#    and the model's extrapolation run natively, from BUILD.
COLLKIT_SIMGRID=require scripts/deps.sh
[ -x "$BUILD/bin/benchreport" ] || { echo "sim-bench: $BUILD/bin/benchreport not found: run make first" >&2; exit 1; }
if [ ! -f "$SBUILD/CMakeCache.txt" ]; then
  say "configuring the simulated build in $SBUILD (smpicc)"
  cmake -S . -B "$SBUILD" -DCOLLKIT_SMPI=ON -DCMAKE_C_COMPILER="$(command -v smpicc)" > /dev/null
fi
say "building collbench and tagtrain with smpicc in $SBUILD"
cmake --build "$SBUILD" -j "$JOBS" --target collbench tagtrain > "$SBUILD/sim-bench-build.log" 2>&1 ||
  { cat "$SBUILD/sim-bench-build.log" >&2; echo "sim-bench: the simulated build failed" >&2; exit 1; }
SBIN=$SBUILD/bin
SIMRUN=sim/simrun

# What runs. Sizes: 16 B .. 16 MB by 4 (1 KB and 16 MB are measured);
# coarser (by 16) at p = 256 and 1024, where one call of a ring is 130,000
# and 2 million simulated messages. The log-p algorithms go to p = 1024.
SIZES=(-b 16 -e 16M -f 4)
NP="16 64 256"
TOPO_ALGOS="ring rd rabenseifner tree2 mpi"
TRAIN_NP="1 2 4 8 16 32 64"
ZERO_NP="16 64 256"
PLAN_NP="16 64"
# The report's acceptance checks, at CHECK_P ranks (benchreport --sim).
CHECK_P=64
CHECKS=(--fastest 1K:rd --near-link 16M:ring,rabenseifner --model-algos ring,rd,rabenseifner)
if [ "$MODE" = quick ]; then
  BIG_SIZES=(-b 16 -e 16M -f 16)      # p = 256
  HUGE_SIZES=(-b 16 -e 1M -f 16)      # p = 1024
  HUGE_ALGOS="rd rabenseifner"
  TOPO_P="64"
  TRAIN_ALGOS="ring rabenseifner rd"
elif [ "$MODE" = smoke ]; then
  SIZES=(-b 16 -e 64K -f 64)
  NP="16" CHECK_P=16 TOPO_P="16" TOPO_ALGOS="ring rd"
  CHECKS=(--fastest 1K:rd --model-algos ring,rd)   # what its sizes and algorithms can show
  HUGE_ALGOS="" TRAIN_ALGOS="ring rd" TRAIN_NP="1 2" ZERO_NP="2" PLAN_NP="4"
else
  SIZES=(-b 16 -e 16M -f 2)
  BIG_SIZES=(-b 16 -e 16M -f 4)
  HUGE_SIZES=(-b 16 -e 16M -f 16)
  HUGE_ALGOS="rd rabenseifner tree tree2"
  TOPO_P="64 256"
  PLAN_NP="16 64 256"
  TRAIN_ALGOS=""                      # every host algorithm
fi
LINK_GBS=3.125 ALPHA_US=1   # sim/platforms/: 25 Gb/s links, 1 us host to host
# Nodes of 8 (sim/gen-platform.sh --topology nodes): the flat algorithms and
# the hierarchical one at each p; at 1024 the log-p ones only (a flat ring
# there is 2 million simulated messages a call).
NODE=8
case $MODE in
  smoke) NODE_NP="16" NODE_ALGOS="ring rd" ;;
  full)  NODE_NP="16 64 256 1024" NODE_ALGOS="ring rd rabenseifner tree2" ;;
  *)     NODE_NP="64 256 1024" NODE_ALGOS="ring rd rabenseifner" ;;
esac
ALGOS=$("$BUILD/bin/collbench" --algo list | awk 'NR > 1 && /^[A-Za-z0-9_]/ && $2 ~ /host/ { print $1 }')
[ -n "$TRAIN_ALGOS" ] || TRAIN_ALGOS=$ALGOS
[ "$MODE" = smoke ] && ALGOS="ring rd mpi"

STAMP=$(date +%Y%m%d-%H%M%S)
. "$(dirname "$0")/newdir.sh"
if [ -n "${SIM_OUT:-}" ]; then
  OUT=$SIM_OUT
  new_dir sim-bench SIM_OUT "$OUT"
  say "mode $MODE, $JOBS simulations at a time; results in $OUT"
else
  new_stamped_dir sim-bench "bench-results/sim-$STAMP" bench-results/sim-latest   # never reuse a folder
  OUT=$NEW_DIR
  say "mode $MODE, $JOBS simulations at a time; results in $OUT (bench-results/sim-latest)"
fi
{
  echo "name crossbar"
  echo "desc every host has its own full-duplex link (25 Gb/s = $LINK_GBS GB/s, 0.5 us) to one non-blocking switch: host to host $ALPHA_US us; hosts of 10 Gflop/s; one rank per host; sim/platforms/crossbar-N.xml with the fewest hosts N >= p; SMPI's TCP correction factors off (sim/gen-platform.sh says why)"
  echo "alpha_us $ALPHA_US"
  echo "bw_gbs $LINK_GBS"
  echo "speed_gflops 10"
} > "$OUT/platform.txt"

# A small job queue: up to JOBS simulations at once, each in a process group
# of its own so that an interrupt stops them all (smpirun leaves its
# simulation running when only the script is killed).
PIDS=()
cleanup() { for pg in "${PIDS[@]}"; do kill -- "-$pg" 2>/dev/null || true; done; }
trap 'cleanup; exit 130' INT TERM
trap cleanup EXIT
job() {   # job LABEL OUTFILE COMMAND...: runs in the background; a line when done
  local label=$1 out=$2; shift 2
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  setsid bash -c '
    label=$1 out=$2 t0=$(date +%s); shift 2
    if "$@" > "$out" 2>&1; then s=done; else s="FAILED (see $out)"; echo "$label: $out" >> "$FAILS"; fi
    printf "[sim-bench %4ds] %-44s %s in %ds\n" $(( $(date +%s) - T0 )) "$label" "$s" $(( $(date +%s) - t0 ))' \
    _ "$label" "$out" "$@" &
  PIDS+=($!)
}
FAILS=$OUT/failed.txt
export T0 FAILS
drain() { wait; }

# 2. Ping-pong between two hosts of the crossbar: alpha and beta recovered.
say "ping-pong on the crossbar (2 hosts): alpha, beta; gamma = the host's charged reduce rate"
$SIMRUN -np 2 "$SBIN/collbench" --pingpong -b 8 -e 64M -f 4 --csv "$OUT/pingpong.csv" \
    --save-model "$OUT/params.txt" > "$OUT/pingpong.txt" 2>&1 ||
  { cat "$OUT/pingpong.txt" >&2; echo "sim-bench: the ping-pong failed" >&2; exit 1; }
grep '^# fit' "$OUT/pingpong.txt" | sed 's/^# /             /'

# 3. The sweeps on the crossbar, one simulation per (p, algorithm): timing
#    runs on folded buffers (sim/simrun -fold; the data are not checked:
#    sim.check.* in the test suite checks them).
COMMON=(-n 1 -w 0 --place out -c 0 --agree off --model "$OUT/params.txt")   # the algorithm alone, as the model describes it
say "sweeps on the crossbar: p = $NP (every host algorithm and SMPI's MPI_Allreduce), p = 1024 ($HUGE_ALGOS)"
for p in 1024 $(echo $NP | tr ' ' '\n' | sort -rn); do   # the longest first: the queue ends together
  case $p in 256) sizes=("${BIG_SIZES[@]}") ;; 1024) sizes=("${HUGE_SIZES[@]}") ;; *) sizes=("${SIZES[@]}") ;; esac
  list=$ALGOS; [ "$p" = 1024 ] && list=$HUGE_ALGOS
  for a in $list; do
    job "sweep p=$p $a" "$OUT/sweep_p${p}_$a.txt" $SIMRUN -np "$p" -fold "$SBIN/collbench" --algo "$a" \
        "${sizes[@]}" "${COMMON[@]}" --csv "$OUT/sweep_p${p}_$a.csv"
  done
done

# 4. The fat trees at the same p: non-blocking and 4:1 oversubscribed.
for p in $TOPO_P; do
  sizes=("${SIZES[@]}"); [ "$p" -ge 256 ] && sizes=("${BIG_SIZES[@]}")
  for plat in fattree fattree-os4; do
    for a in $TOPO_ALGOS; do
      job "$plat p=$p $a" "$OUT/topo_${plat}_p${p}_$a.txt" $SIMRUN -np "$p" -platform "$plat" -fold \
          "$SBIN/collbench" --algo "$a" "${sizes[@]}" "${COMMON[@]}" --csv "$OUT/topo_${plat}_p${p}_$a.csv"
    done
  done
done

# 4a. Nodes: flat algorithms against the hierarchical all-reduce, where the
#     registry has one (hier:INTRA/INTER; asked of collbench, so this runs
#     before and after it is there), on nodes of NODE hosts. The ranks are
#     told the node size (COLLKIT_RANKS_PER_NODE): a simulated host is a node
#     to MPI_Comm_split_type, the zones of the platform are not. The model
#     column prices each step with the link it crosses, both links recovered
#     by a ping-pong on the platform (params_nodes.txt).
node_platform() {   # node_platform P: the platform of P hosts in nodes of NODE
  if [ -f "sim/platforms/nodes$NODE-$1.xml" ]; then echo "sim/platforms/nodes$NODE-$1.xml"; return; fi
  mkdir -p "$OUT/platforms"
  sim/gen-platform.sh --topology nodes --node "$NODE" --hosts "$1" "$OUT/platforms/nodes$NODE-$1.xml" > /dev/null
  echo "$OUT/platforms/nodes$NODE-$1.xml"
}
NRUN=(env COLLKIT_RANKS_PER_NODE=$NODE "$SIMRUN")
say "ping-pong on nodes of $NODE hosts: the link inside a node and the one between nodes"
"${NRUN[@]}" -np $((2 * NODE)) -platform "$(node_platform $((2 * NODE)))" "$SBIN/collbench" --pingpong -b 8 -e 16M -f 4 \
    --save-model "$OUT/params_nodes.txt" > "$OUT/pingpong_nodes.txt" 2>&1 ||
  { cat "$OUT/pingpong_nodes.txt" >&2; echo "sim-bench: the ping-pong on nodes failed" >&2; exit 1; }
grep '^# fit' "$OUT/pingpong_nodes.txt" | sed 's/^# /             /'
HIER=""
for h in $("$BUILD/bin/collbench" --algo list | grep -o '^hier:[^ ]*' || true) hier:ring/ring hier:ring/rabenseifner hier:rd/rd; do
  case " $HIER " in *" $h "*) continue ;; esac
  # (with ring beside it: a name the registry lacks is refused, one without a model is not)
  "$BUILD/bin/collbench" --algo "$h,ring" --extrapolate --model "$OUT/params.txt" > /dev/null 2>&1 || continue
  # Known to the registry; and it runs where there is no shared memory (a
  # simulated host each): one small call first, so a refusal is named here.
  if "${NRUN[@]}" -np $((2 * NODE)) -platform "$(node_platform $((2 * NODE)))" "$SBIN/collbench" --algo "$h" \
       -b 1K -e 1K -n 1 -w 0 -c 1 --model none > "$OUT/hier_probe.txt" 2>&1; then
    HIER="$HIER $h"
  else
    say "$h left out: it does not run on simulated nodes ($(grep -v '^#' "$OUT/hier_probe.txt" | tail -1))"
  fi
done
[ -n "$HIER" ] || say "no hierarchical all-reduce (hier:INTRA/INTER) in the registry: the nodes compare flat algorithms only"
NCOMMON=("${COMMON[@]}"); NCOMMON[${#NCOMMON[@]} - 1]=$OUT/params_nodes.txt   # --model: both links
for p in $NODE_NP; do
  case $p in 256) sizes=("${BIG_SIZES[@]}") ;; 1024) sizes=("${HUGE_SIZES[@]}") ;; *) sizes=("${SIZES[@]}") ;; esac
  list="$NODE_ALGOS $HIER"; [ "$p" = 1024 ] && list="$(echo "$NODE_ALGOS" | sed 's/\bring\b//') $HIER"
  plat=$(node_platform "$p")
  for a in $list; do
    f=node_p${p}_$(echo "$a" | tr ':/' '__')
    job "nodes p=$p $a" "$OUT/$f.txt" "${NRUN[@]}" -np "$p" -platform "$plat" -fold "$SBIN/collbench" --algo "$a" \
        "${sizes[@]}" "${NCOMMON[@]}" --csv "$OUT/$f.csv"
  done
done

# 4b. Reduce-scatter and all-gather on the crossbar at the same p: every
#     algorithm of the two registries that runs on host buffers (smoke: the
#     rings), busbw with the factor (p-1)/p. Appended to summary.md; rows in
#     colls.csv (rs:NAME, ag:NAME).
for coll in reduce_scatter allgather; do
  tag=$([ $coll = reduce_scatter ] && echo rs || echo ag)
  calgos=$("$BUILD/bin/collbench" --coll $coll --algo list | awk 'NR > 1 && /^[A-Za-z0-9_]/ && $2 ~ /host/ { print $1 }')
  [ "$MODE" = smoke ] && calgos=ring
  for p in $NP; do
    sizes=("${SIZES[@]}"); [ "$p" -ge 256 ] && sizes=("${BIG_SIZES[@]}")
    for a in $calgos; do
      job "$coll p=$p $a" "$OUT/${tag}_p${p}_$a.txt" $SIMRUN -np "$p" -fold "$SBIN/collbench" --coll $coll --algo "$a" \
          "${sizes[@]}" "${COMMON[@]}" --csv "$OUT/${tag}_p${p}_$a.csv"
    done
  done
done

# 5. The trainer, weak scaling: LOCAL rows per rank per step, the whole
#    gradient all-reduced (tagtrain's default), compute charged as modelled
#    flops (trainer/tagtrain.c, sim_charge). Synthetic data (tagsynth: the same on every
#    machine), large enough for 4 steps per epoch at p = 64; a model small
#    enough for 64 copies in one process.
LOCAL=16
ROWS=$((64 * LOCAL * 4 * 5 / 4))   # 4 steps at p = 64 after the 20 % validation split
"$BUILD/bin/tagsynth" --rows "$ROWS" --out "$OUT/trainer_data.csv" --overwrite > /dev/null
"$BUILD/bin/tagsynth" --rows 512 --seed 2 --out "$OUT/trainer_holdout.csv" --overwrite > /dev/null
TRAIN=(--data "$OUT/trainer_data.csv" --holdout "$OUT/trainer_holdout.csv" --features 4096 --char-ngrams off --hidden 64
       --epochs 2 --no-save --quiet)
for p in $TRAIN_NP; do
  for a in $TRAIN_ALGOS; do
    [ "$p" = 1 ] && [ "$a" != "${TRAIN_ALGOS%% *}" ] && continue   # p = 1: no all-reduce to choose
    job "trainer p=$p $a" "$OUT/trainer_${a}_p$p.txt" $SIMRUN -np "$p" "$SBIN/tagtrain" --algo "$a" \
        --batch $((LOCAL * p)) "${TRAIN[@]}" --log "$OUT/trainer_${a}_p$p.jsonl"
  done
done

# 5b. Sharded training: replicated data parallelism against --zero 1 and
#     --zero 2 (buckets of 256 KiB: 4 of the 1 MB gradient buffer) at
#     p = ZERO_NP, ZLOCAL rows per rank per step. The log-p halves (halving,
#     rd; replicated: rabenseifner, which is those two) keep p = 256 under a
#     minute; data for two steps at p = 256, one epoch. About 2 minutes with
#     two simulations at a time on 2 cores (p = 256: 40-60 s each).
ZLOCAL=4
"$BUILD/bin/tagsynth" --rows $((256 * ZLOCAL * 2)) --out "$OUT/zero_data.csv" --overwrite > /dev/null
ZTRAIN=(--data "$OUT/zero_data.csv" --holdout "$OUT/trainer_holdout.csv" --features 4096 --char-ngrams off --hidden 64
        --epochs 1 --no-save --quiet --algo rabenseifner --rs-algo halving --ag-algo rd)
for p in $ZERO_NP; do
  for z in 0 1 2; do
    zb=(); [ $z = 2 ] && zb=(--bucket-mb 0.25)
    job "zero$z p=$p" "$OUT/zero${z}_p$p.txt" $SIMRUN -np "$p" "$SBIN/tagtrain" --zero $z "${zb[@]}" \
        --batch $((ZLOCAL * p)) "${ZTRAIN[@]}" --log "$OUT/zero${z}_p$p.jsonl"
  done
done
# 5c. The parallel plans side by side (the section of make bench, where the
#     trade-offs show): the same data and model as 5b, PLOCAL rows per rank
#     per step, one simulation per plan and p. Each plan's options; the
#     hybrid only where tagtrain takes --tp with --pp (asked natively first:
#     a refusal is named in plans_setup.txt, not a failed simulation).
PLOCAL=4
plan_opts() {   # plan_opts NAME: its tagtrain options
  case $1 in
    dp) echo --algo rabenseifner ;;
    zero2) echo --zero 2 --bucket-mb 0.25 --algo rabenseifner --rs-algo halving --ag-algo rd ;;
    tp2) echo --tp 2 --tp-algo ring --algo rabenseifner ;;
    pp2-1f1b) echo --pp 2 --microbatches 4 --pp-schedule 1f1b --algo rabenseifner ;;
    pp2-gpipe) echo --pp 2 --microbatches 4 --pp-schedule gpipe --algo rabenseifner ;;
    tp2xpp2) echo --tp 2 --tp-algo ring --pp 2 --microbatches 4 --pp-schedule 1f1b --algo rabenseifner ;;
  esac
}
PLANS="dp zero2 tp2 pp2-1f1b pp2-gpipe tp2xpp2"
echo "tagsynth data, 4096 features, 64 hidden units (a 1 MB model, W_0 99.9 % of it), $PLOCAL rows per rank per step, one epoch; p = $PLAN_NP simulated hosts of the crossbar; data parallelism by rabenseifner, ZeRO-2 by halving + rd, --tp's all-reduce by ring, --pp with 4 micro-batches" \
  > "$OUT/plans_setup.txt"
# shellcheck disable=SC2046  # one word per option
refusal=$("$BUILD/bin/tagtrain" $(plan_opts tp2xpp2) --no-save 2>&1 | grep -m1 "does not take" | sed 's/^tagtrain: //; s/:.*//' || true)
[ -n "$refusal" ] && { PLANS=${PLANS% tp2xpp2}; echo "tp2xpp2: refused by tagtrain ($refusal)" >> "$OUT/plans_setup.txt"; }
for p in $PLAN_NP; do
  for n in $PLANS; do
    # shellcheck disable=SC2046  # one word per option
    # ZTRAIN's data and model (its first 14 words), not its algorithms
    job "plan $n p=$p" "$OUT/plan_${n}_p$p.txt" $SIMRUN -np "$p" "$SBIN/tagtrain" $(plan_opts "$n") \
        --batch $((PLOCAL * p)) "${ZTRAIN[@]:0:14}" --log "$OUT/plan_${n}_p$p.jsonl"
  done
done
drain
[ -s "$FAILS" ] && say "$(wc -l < "$FAILS") simulations failed (listed in $FAILS; the rest of the report is written)"

# 6. Collect: sweep.csv (every p, every algorithm), topology.csv, trainer.csv.
collect() {   # collect OUTFILE FILES...: one header, then the rows
  local out=$1 first=1; shift
  : > "$out"
  for f in "$@"; do
    [ -s "$f" ] || continue
    if [ $first = 1 ]; then cat "$f"; first=0; else tail -n +2 "$f"; fi >> "$out"
  done
}
files=()
for p in $NP 1024; do
  list=$ALGOS; [ "$p" = 1024 ] && list=$HUGE_ALGOS
  for a in $list; do files+=("$OUT/sweep_p${p}_$a.csv"); done
done
collect "$OUT/sweep.csv" "${files[@]}"
: > "$OUT/topology.csv"
for p in $TOPO_P; do
  for plat in fattree fattree-os4; do
    for a in $TOPO_ALGOS; do
      f=$OUT/topo_${plat}_p${p}_$a.csv
      [ -s "$f" ] || continue
      if [ -s "$OUT/topology.csv" ]; then tail -n +2 "$f"; else head -1 "$f"; tail -n +2 "$f"; fi |
        awk -v pl="$plat" 'NR == 1 && /^algo,/ { print $0 ",platform"; next } { print $0 "," pl }' >> "$OUT/topology.csv"
    done
  done
done
# nodes.csv: the node sweeps, a last column naming the platform.
: > "$OUT/nodes.csv"
for f in "$OUT"/node_p*.csv; do
  [ -s "$f" ] || continue
  p=$(basename "$f" | sed 's/^node_p\([0-9]*\)_.*/\1/')
  awk -v pl="nodes$NODE-$p" -v hdr="$([ -s "$OUT/nodes.csv" ] && echo 0 || echo 1)" \
      'NR == 1 { if (hdr) print $0 ",platform"; next } { print $0 "," pl }' "$f" >> "$OUT/nodes.csv"
done
summary_of() { grep -h '"type":"summary"' "$1" 2>/dev/null | sed 's/.*"samples_per_s":\([0-9.e+-]*\),"comm_fraction":\([0-9.e+-]*\).*/\1 \2/'; }
first_algo=${TRAIN_ALGOS%% *}
read -r s1 c1 < <(summary_of "$OUT/trainer_${first_algo}_p1.jsonl" || true) || true
echo "algo,p,samples_per_s,efficiency,comm_fraction" > "$OUT/trainer.csv"
for a in $TRAIN_ALGOS; do
  [ -n "${s1:-}" ] && echo "$a,1,$s1,1.000,$c1" >> "$OUT/trainer.csv"
  for p in $TRAIN_NP; do
    [ "$p" = 1 ] && continue
    read -r s c < <(summary_of "$OUT/trainer_${a}_p$p.jsonl" || true) || continue
    eff=$(awk -v s="$s" -v s1="${s1:-0}" -v p="$p" 'BEGIN { printf "%.3f", (s1 > 0 ? s / (p * s1) : 0) }')
    echo "$a,$p,$s,$eff,$c" >> "$OUT/trainer.csv"
  done
done
# zero.csv: simulated seconds per step, the bytes a rank holds between
# steps, the bytes it sends per step (measured; replicated: what
# rabenseifner sends, 2(p-1)/p of the buffer). Peak resident memory is left
# out: SMPI runs every rank in one process.
echo "mode,p,step_s,compute_per_step_s,comm_per_step_s,param_bytes,grad_bytes,optim_state_bytes,sent_bytes_per_step" \
  > "$OUT/zero.csv"
for p in $ZERO_NP; do
  for z in 0 1 2; do
    log=$OUT/zero${z}_p$p.jsonl
    f() { grep "\"type\":\"$1\"" "$log" 2>/dev/null | sed "s/.*\"$2\":\([^,}]*\).*/\1/"; }
    cps=$(f summary compute_per_step_s || true) mps=$(f summary comm_per_step_s || true)
    [ -n "$cps" ] || continue   # a failed simulation: listed in failed.txt
    if [ $z = 0 ]; then
      sent=$(awk -v b="$(f run gradient_bytes)" -v p="$p" 'BEGIN { printf "%.0f", 2 * (p - 1) / p * b }')
    else
      sent=$(f step sent_bytes | awk '{ s += $1; n++ } END { printf "%.0f", n ? s / n : 0 }')
    fi
    echo "$([ $z = 0 ] && echo replicated || echo zero$z),$p,$(awk -v a="$cps" -v b="$mps" 'BEGIN { printf "%.6g", a + b }'),$cps,$mps,$(f run param_bytes_per_rank),$(f run grad_bytes_per_rank),$(f run optim_state_bytes_per_rank),$sent" \
      >> "$OUT/zero.csv"
  done
done
# plans.csv: each simulated plan's row (scripts/bench_plans.sh reads the log;
# no resident memory: SMPI runs every rank in one process).
scripts/bench_plans.sh --header > "$OUT/plans.csv"
for p in $PLAN_NP; do
  for n in $PLANS; do
    [ -s "$OUT/plan_${n}_p$p.jsonl" ] && grep -q '"type":"summary"' "$OUT/plan_${n}_p$p.jsonl" || continue   # failed: in failed.txt
    scripts/bench_plans.sh --row "$n" "$OUT/plan_${n}_p$p.jsonl" --no-rss >> "$OUT/plans.csv"
  done
done
rm -f "$OUT/trainer_data.csv" "$OUT/trainer_holdout.csv" "$OUT/zero_data.csv"   # regenerated from their seeds; not results
PT=${TRAIN_NP##* }
say "trainer (p = 1 .. $PT, efficiency at p = $PT): $(awk -F, -v p="$PT" '$2 == p { printf "%s%s %s", sep, $1, $4; sep = ", " }' "$OUT/trainer.csv")"

# 7. The model to 4096 ranks with the recovered parameters (arithmetic only: native).
"$BUILD/bin/collbench" --extrapolate --model "$OUT/params.txt" --csv "$OUT/extrap.csv" > "$OUT/extrap.txt" 2>&1 ||
  say "extrapolation failed (see $OUT/extrap.txt)"

# 8. Summary and plots.
INFO="Simulated with $(smpirun -version 2>/dev/null | head -1 || echo SimGrid) on $(hostname), mode $MODE; run $STAMP."
REPORT=("$BUILD/bin/benchreport" --sim --dir "$OUT" --info "$INFO" --check-p "$CHECK_P" "${CHECKS[@]}"
        --ref-label "SMPI model, reductions free")
"${REPORT[@]}"
if command -v gnuplot > /dev/null 2>&1; then
  say "plots"
  PNGTERM=png
  gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo && PNGTERM=pngcairo
  PALGOS=$(tail -n +2 "$OUT/sweep.csv" | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
  XALGOS=$(tail -n +2 "$OUT/extrap.csv" 2>/dev/null | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
  ALPHA=$(awk '$1 == "alpha_us" { print $2 }' "$OUT/params.txt")
  BETA=$(awk '$1 == "beta_ns_per_byte" { print $2 }' "$OUT/params.txt")
  plot() {   # plot SCRIPT [extra -e]
    for fmt in png svg; do
      gnuplot -e "dir='$OUT'; fmt='$fmt'; pngterm='$PNGTERM'; algos='$PALGOS'; memcpy=$LINK_GBS; ceiling='link';" \
              -e "link=$LINK_GBS; alpha_us=$ALPHA; beta_ns=$BETA; refname='mpi'; reflabel='SMPI model, reductions free'" \
              ${2:+-e "$2"} "plots/$1.gp" 2>> "$OUT/gnuplot.log" || say "plot $1 failed (see $OUT/gnuplot.log)"
    done
  }
  for p in $NP 1024; do   # each p with the algorithms that ran at it
    at=$(awk -F, -v p="$p" 'NR > 1 && $2 == p && !seen[$1]++ { printf "%s ", $1 }' "$OUT/sweep.csv")
    [ -n "$at" ] || continue
    PALGOS=$at plot busbw "p=$p"; PALGOS=$at plot latency "p=$p"; PALGOS=$at plot model "p=$p"
  done
  for p in $TOPO_P; do PALGOS=$TOPO_ALGOS plot topology "p=$p; ft='fattree'; ftos='fattree-os4'"; done
  plot pingpong
  plot scaling
  [ -n "$XALGOS" ] && PALGOS=$XALGOS plot extrapolation
  PALGOS=$TRAIN_ALGOS plot trainer_scaling
  "${REPORT[@]}"   # again: it links the plots that now exist
  [ -s "$OUT/gnuplot.log" ] || rm -f "$OUT/gnuplot.log"
else
  say "gnuplot not found: CSV and summary only (scripts/deps.sh installs gnuplot-nox)"
fi
# The halves, appended to the summary (benchreport covers the all-reduce).
: > "$OUT/colls.csv"
for f in "$OUT"/rs_p*_*.csv "$OUT"/ag_p*_*.csv; do
  [ -s "$f" ] || continue
  t=$(basename "$f" | cut -d_ -f1)
  awk -F, -v OFS=, -v t="$t" -v hdr="$([ -s "$OUT/colls.csv" ] && echo 0 || echo 1)" \
      'NR == 1 { if (hdr) print; next } { $1 = t ":" $1; print }' "$f" >> "$OUT/colls.csv"
done
if [ -s "$OUT/colls.csv" ]; then
  {
    echo
    echo "## Reduce-scatter and all-gather (simulated crossbar)"
    echo
    echo "busbw = algbw * (p-1)/p (size: the whole buffer); every row in colls.csv (rs:NAME, ag:NAME)."
    echo
    echo "| collective:algorithm | p | bytes | time us | busbw GB/s | model us |"
    echo "|---|---|---|---|---|---|"
    awk -F, 'NR > 1 && ($3 == 1024 || $3 == 1048576 || $3 == 16777216) { printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $9, $13, $15 }' "$OUT/colls.csv"
  } >> "$OUT/summary.md"
fi
if [ -s "$OUT/nodes.csv" ]; then
  {
    echo
    echo "## Nodes: flat against hierarchical (simulated)"
    echo
    echo "Nodes of $NODE hosts: inside a node $(sed -n 's/^# fit: alpha = \([0-9.]*\) us.*(\([0-9.]*\) GB\/s).*/\1 µs, \2 GB\/s/p' "$OUT/pingpong_nodes.txt" | head -1)"
    echo "per host; between nodes $(sed -n 's/^# fit: link between nodes: alpha = \([0-9.]*\) us.*(\([0-9.]*\) GB\/s).*/\1 µs, \2 GB\/s/p' "$OUT/pingpong_nodes.txt")"
    echo "through ONE uplink per node that its $NODE ranks share (ping-pong on the platform, params_nodes.txt)."
    echo "The fastest flat algorithm against the fastest hierarchical one (hier:INTRA/INTER: inside each node,"
    echo "then across nodes on a shard, then inside again); busbw in GB/s, and each one's model (every step"
    echo "priced with the link it crosses) as simulated / model. Rows in nodes.csv."
    echo
    if [ -z "$HIER" ]; then
      echo "No hierarchical all-reduce in this build's registry: the flat algorithms alone."
      echo
    fi
    echo "| p | size | fastest flat | busbw | sim / model | fastest hier | busbw | sim / model | hier / flat |"
    echo "|---|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 && $7 == "out" && ($3 == 1024 || $3 == 65536 || $3 == 1048576 || $3 == 16777216) {
        k = $2 SUBSEP $3; h = ($1 ~ /^hier:/); if ($1 == "mpi") next
        if (!(k in seen)) { seen[k] = 1; keys[++n] = k }
        if (!((k, h) in best) || $9 < t[k, h]) { best[k, h] = $1; t[k, h] = $9; bw[k, h] = $13; m[k, h] = $15 }
      }
      function ratio(k, h) { return m[k, h] > 0 ? sprintf("%.2f", t[k, h] / m[k, h]) : "-" }
      function sz(b) { return b >= 1048576 ? b / 1048576 " MB" : b >= 1024 ? b / 1024 " KB" : b " B" }
      END {
        for (i = 1; i <= n; i++) {
          split(keys[i], pb, SUBSEP); k = keys[i]
          f = ((k, 0) in best); g = ((k, 1) in best)
          printf "%d\t%d\t| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", pb[1], pb[2], pb[1], sz(pb[2]),
                 f ? best[k, 0] : "-", f ? bw[k, 0] : "-", f ? ratio(k, 0) : "-",
                 g ? best[k, 1] : "-", g ? bw[k, 1] : "-", g ? ratio(k, 1) : "-",
                 (f && g && bw[k, 0] > 0) ? sprintf("%.2fx", bw[k, 1] / bw[k, 0]) : "-"
        }
      }' "$OUT/nodes.csv" | sort -n -k1,1 -k2,2 | cut -f3
  } >> "$OUT/summary.md"
fi
if [ "$(wc -l < "$OUT/zero.csv")" -gt 1 ]; then
  {
    echo
    echo "## Sharded training (simulated tagtrain --zero 1 and --zero 2)"
    echo
    echo "Replicated data parallelism (rabenseifner) against ZeRO stages 1 and 2 (halving + rd), $ZLOCAL rows"
    echo "per rank per step, a 1 MB model: simulated seconds per step, bytes per rank held between steps and"
    echo "sent per step (zero.csv)."
    echo
    echo "| mode | p | step s | compute s | comm s | parameters B | gradients B | optimizer state B | sent B/step |"
    echo "|---|---|---|---|---|---|---|---|---|"
    tail -n +2 "$OUT/zero.csv" | awk -F, '{ printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n" }'
  } >> "$OUT/summary.md"
fi
say "done: $OUT/summary.md"
sed -n '/^## Acceptance checks/,/^## The fastest/p' "$OUT/summary.md" | grep '^- \|^  ' || true
if [ -s "$FAILS" ]; then
  echo "sim-bench: $(wc -l < "$FAILS") simulation(s) failed; their figures are missing from the report:" >&2
  sed 's/^/  /' "$FAILS" >&2
  exit 1
fi
