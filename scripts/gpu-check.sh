#!/usr/bin/env bash
# gpu-check.sh [BUILD_DIR] — does collkit work on this GPU node? One command,
# no network, under 10 minutes (make gpu-check runs it into build-gpu/):
#   1. the node: GPUs (name, PCI id, memory, compute mode, compute capability),
#      driver, CUDA_VISIBLE_DEVICES, peer access between the GPUs, nvcc, MPI,
#      NCCL (its library, header and version);
#   2. a build of the library, collcheck, collbench and the GPU tests with CUDA
#      for this GPU's architecture (cmake; no apt-get, unlike make build);
#   3. collbench --gpus, as the ranks count the devices: none -> exit 3;
#   4. the GPU tests, one verdict each: ctest -L gpu (the CUDA IPC transport
#      at p = 1-4, collcheck on device buffers for all-reduce, reduce-scatter
#      and all-gather, the trainer's device model against the host's, and,
#      with the Made With ML data, gpu.trainer_device: tagtrain --device cuda
#      against the host trainer, data parallelism on the device, checkpoints
#      across the two), gpu.probe and unit.cuda_logic;
#   5. collcheck --quick of every algorithm that takes device buffers, at
#      p = 1, 2 and 3 (ranks share the GPUs when there are fewer: local rank
#      modulo device count; nccl only where every rank has its own GPU);
#   6. a short sweep: p = 1 with nccl, p = 2 (time-shared on one GPU); then,
#      with the Made With ML data, the trainer's samples/s on the host and the
#      device (the default model, p = 1, 3 epochs);
#   7. BUILD_DIR/gpu-check/report.md: every step's verdict, the figures
#      (busbw at the largest size per algorithm, how far the device trainer is
#      from the host's, trainer samples/s host and device), the logs beside it.
# Exit status: 0 every step passed; 1 a step failed (the report names it);
# 2 something needed is missing (cmake, nvcc, MPI): named; 3 no usable GPU
# here (none, no driver, or all hidden by CUDA_VISIBLE_DEVICES): said so.
#
# What it needs: CMake >= 3.18, nvcc (PATH or /usr/local/cuda), an MPI
# (mpicc, mpirun), NCCL optional. Hints, all optional:
#   NCCL_HOME=DIR            NCCL's include/ and lib/ (a tarball, a module)
#   COLLKIT_NCCL_LIBRARY=F, COLLKIT_NCCL_INCLUDE_DIR=D   exact paths
#   (else the pip wheel nvidia-nccl-cu12/cu13 is found through python3, and
#   then /usr/local/cuda and the system paths)
#   GPU_CHECK_DEBS=DIR       no MPI installed: unpack Open MPI (and OpenBLAS, for
#                            the trainer's host reference) from these Debian 12
#                            .debs (made by `scripts/gpu-check.sh --pack` on a
#                            machine with apt; default .gpu-pack/debs when present)
#   COLLKIT_DATA=DIR         the Made With ML data, for the trainer's steps
#   GPU_ARCH=90              CUDA architecture (default: the first GPU's)
#   COLLKIT_TIMEOUT=20       the watchdog bound of every wait (default 20 s here)
#
# gpu-check.sh --pack  (on a Debian 12 machine with apt, not the GPU node)
#   downloads Open MPI, OpenBLAS and their runtime libraries as .debs into
#   .gpu-pack/debs, and NCCL's header when this machine has one (some pip
#   wheels ship none) into .gpu-pack/ (git-ignored): carry the working tree
#   with it to a node without MPI.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

MPI_DEBS="openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libmunge2 libhwloc15
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libpsm2-2 libpsm-infinipath1
  libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200 libnuma1 libatomic1 zlib1g
  libopenblas0-pthread libopenblas-pthread-dev libopenblas-dev libopenblas0 libgfortran5 libquadmath0"
if [ "${1:-}" = "--pack" ]; then
  mkdir -p .gpu-pack/debs
  (cd .gpu-pack/debs && { apt-get download $MPI_DEBS 2>/dev/null || { apt-get update -qq && apt-get download $MPI_DEBS; }; }) ||
    { echo "gpu-check --pack: apt-get download failed (a Debian 12 machine with network is needed)"; exit 2; }
  for h in "${COLLKIT_NCCL_INCLUDE_DIR:-/nonexistent}/nccl.h" /usr/local/cuda/include/nccl.h /usr/include/nccl.h; do
    [ -f "$h" ] && { cp "$h" .gpu-pack/nccl.h; break; }
  done
  echo "gpu-check --pack: $(ls .gpu-pack/debs | wc -l) .debs in .gpu-pack/debs ($(du -sh .gpu-pack | cut -f1))"
  exit 0
fi
case "${1:-}" in -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;; esac

B=$(mkdir -p "${1:-build-gpu}" && cd "${1:-build-gpu}" && pwd)
O=$B/gpu-check
rm -rf "$O"; mkdir -p "$O"
REPORT=$O/report.md
export COLLKIT_TIMEOUT=${COLLKIT_TIMEOUT:-20}
T0=$(date +%s)
say() { printf '[gpu-check %4ds] %s\n' $(( $(date +%s) - T0 )) "$*" | tee -a "$O/gpu-check.log"; }
md() { printf '%s\n' "$*" >> "$REPORT"; }
FAILED=()
# bound N: N seconds, or what is left of the 10-minute budget (9.5 min of
# steps, then the report) if that is less; 0 when it is spent.
bound() { local left=$(( 570 - ($(date +%s) - T0) )); [ "$left" -lt 15 ] && left=0; echo $(( $1 < left ? $1 : left )); }
run_for() {   # run_for N CMD...: CMD under timeout (bound N); 124 when the budget is spent
  local t; t=$(bound "$1"); shift
  [ "$t" -gt 0 ] || { echo "gpu-check: skipped, the 10-minute budget is spent"; return 124; }
  timeout -k 10 "$t" "$@"
}
step() {   # step NAME STATUS DETAIL: one line of the verdict table
  md "| $1 | $2 | $3 |"
  [ "$2" = FAIL ] && FAILED+=("$1")
  say "$1: $2${3:+ ($3)}"
}
finish() {   # finish CODE VERDICT
  { md ""; md "**Verdict: $2** ($(( $(date +%s) - T0 )) s; logs in $O)"; }
  say "$2 — report: $REPORT"
  exit "$1"
}

{ md "# collkit gpu-check, $(date -u '+%Y-%m-%d %H:%M UTC')"; md ""
  md "Source: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' + local edits'); build: $B"; md ""; }

# ---------------------------------------------------------------- 1. the node
md "## The node"; md ""; md '```'
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total,compute_mode,compute_cap,driver_version --format=csv \
      > "$O/gpus.csv" 2>&1 || true
  cat "$O/gpus.csv" >> "$REPORT"
  md "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>}"
  nvidia-smi topo -p2p r > "$O/p2p.txt" 2>&1 && { md "peer access (nvidia-smi topo -p2p r; OK = can read):"; cat "$O/p2p.txt" >> "$REPORT"; }
  grep -q "Exclusive_Process" "$O/gpus.csv" &&
    md "NOTE: a GPU in Exclusive_Process mode takes one process: ranks that share it fail at setup (the message says so)"
else
  md "nvidia-smi: not found"
fi
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
md "nvcc: $([ -n "$NVCC" ] && "$NVCC" --version | grep -i release || echo 'not found')"
md "cmake: $(cmake --version 2>/dev/null | head -1 || echo 'not found')"

# MPI: the system's, else Open MPI unpacked from carried .debs (relocated
# with OPAL_PREFIX; one node, so no ssh launcher: plm=isolated).
DEBS=${GPU_CHECK_DEBS:-}
[ -z "$DEBS" ] && [ -d "$ROOT/.gpu-pack/debs" ] && DEBS=$ROOT/.gpu-pack/debs
MPI_CMAKE=()
if ! command -v mpicc >/dev/null 2>&1 && [ -n "$DEBS" ]; then
  P=$B/gpu-check-mpi
  # The carried Debian 12 libraries need glibc >= 2.36.
  GLIBC=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  case ${GLIBC:-0} in 2.3[6-9]|2.[4-9]*) ;; *) md "NOTE: glibc ${GLIBC:-unknown} < 2.36: the carried Open MPI may not load";; esac
  if [ ! -x "$P/usr/bin/orterun" ]; then
    # Base libraries only where the image lacks them: its own copies are never shadowed.
    have_lib() { for f in $(ldconfig -p | awk -v s="$1" '$1 == s { print $NF }'); do [ -e "$f" ] && return 0; done; return 1; }
    for d in "$DEBS"/*.deb; do
      case ${d##*/} in
        zlib1g_*) have_lib libz.so.1 && continue ;;         libnuma1_*) have_lib libnuma.so.1 && continue ;;
        libatomic1_*) have_lib libatomic.so.1 && continue ;;
      esac
      dpkg-deb -x "$d" "$P" || { md "cannot unpack $d"; break; }
    done
    for t in mpirun mpiexec mpicc; do ln -sf "$t.openmpi" "$P/usr/bin/$t"; done
    # The link update-alternatives would have made (libfabric's psm provider loads it).
    ln -sf ../libpsm1/libpsm_infinipath.so.1.16 "$P/usr/lib/x86_64-linux-gnu/libpsm_infinipath.so.1"
  fi
  L=$P/usr/lib/x86_64-linux-gnu
  export OPAL_PREFIX=$P/usr OPAL_SYSCONFDIR=$P/etc/openmpi PMIX_MCA_mca_base_component_path=$L/pmix2/lib/pmix
  export PATH=$P/usr/bin:$PATH LD_LIBRARY_PATH=$L/openmpi/lib:$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export OMPI_MCA_plm=isolated OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  MPI_CMAKE=(-DMPI_C_COMPILER="$P/usr/bin/mpicc.openmpi" -DMPIEXEC_EXECUTABLE="$P/usr/bin/mpiexec.openmpi")
  # OpenBLAS, when the .debs carried it: the host trainer, the device's reference.
  if [ -d "$L/openblas-pthread" ]; then
    export LD_LIBRARY_PATH=$L/openblas-pthread:$LD_LIBRARY_PATH
    MPI_CMAKE+=(-DCMAKE_PREFIX_PATH="$P/usr" -DCMAKE_INCLUDE_PATH="$P/usr/include/x86_64-linux-gnu/openblas-pthread"
                -DCMAKE_LIBRARY_PATH="$L/openblas-pthread")
  fi
  md "MPI: unpacked from $DEBS into $P"
fi
md "MPI: $(mpirun --version 2>/dev/null | head -1 || echo 'not found')"

# NCCL: hints first, then the pip wheel, then CUDA's and the system's folders.
first() { for f in "$@"; do [ -n "$f" ] && [ -e "$f" ] && { echo "$f"; return 0; }; done; return 1; }
# The wheels (nvidia-nccl-cu12, -cu13) lay NCCL out differently: look for it
# anywhere under python3's nvidia/ package folder.
NVPKG=$(python3 -c 'import nvidia, os; print(list(nvidia.__path__)[0])' 2>/dev/null || true)
WLIB=$([ -n "$NVPKG" ] && find "$NVPKG" -name 'libnccl.so*' -path '*lib*' 2>/dev/null | sort | head -1)
WINC=$([ -n "$NVPKG" ] && find "$NVPKG" -name nccl.h 2>/dev/null | head -1)
NLIB=$(first "${COLLKIT_NCCL_LIBRARY:-}" ${NCCL_HOME:+"$NCCL_HOME"/lib/libnccl.so "$NCCL_HOME"/lib/libnccl.so.2} \
             $WLIB /usr/local/cuda/lib64/libnccl.so /usr/local/cuda/lib/libnccl.so \
             /usr/lib/x86_64-linux-gnu/libnccl.so.2 || true)
# The header last from .gpu-pack/ (gpu-check.sh --pack): a wheel without one.
NINC=$(first "${COLLKIT_NCCL_INCLUDE_DIR:+$COLLKIT_NCCL_INCLUDE_DIR/nccl.h}" ${NCCL_HOME:+"$NCCL_HOME"/include/nccl.h} \
             $WINC /usr/local/cuda/include/nccl.h /usr/include/nccl.h "$ROOT/.gpu-pack/nccl.h" || true)
NVER=$([ -n "$NINC" ] && awk '/^#define NCCL_(MAJOR|MINOR|PATCH) /{v = v (v ? "." : "") $3} END {print v}' "$NINC")
md "NCCL: library ${NLIB:-not found}, header ${NINC:-not found}${NVER:+, version $NVER}"
[ -n "$NLIB" ] && [ -z "$NINC" ] &&
  md "NOTE: NCCL's library without its header (some pip wheels ship none): the nccl reference is left out;" \
     "      COLLKIT_NCCL_INCLUDE_DIR=DIR (a folder with the nccl.h of that version) brings it in"
md '```'; md ""

md "## Steps"; md ""; md "| step | result | detail |"; md "|---|---|---|"
missing=""
[ -n "$NVCC" ] || missing="$missing nvcc"
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 || missing="$missing MPI(mpicc,mpirun)"
if [ -n "$missing" ]; then
  step "prerequisites" FAIL "missing:$missing (MPI: install it, or GPU_CHECK_DEBS, see --help)"
  finish 2 "MISSING PREREQUISITES"
fi
# No GPU at all: said before minutes of building. (Without nvidia-smi but
# with a device node, the build goes on and collbench --gpus decides.)
if command -v nvidia-smi >/dev/null 2>&1; then
  if ! nvidia-smi -L > "$O/nvidia-smi-L.txt" 2>&1 || ! grep -q GPU "$O/nvidia-smi-L.txt"; then
    step "GPU" "NO GPU" "nvidia-smi -L: $(head -1 "$O/nvidia-smi-L.txt")"
    finish 3 "NO GPU ON THIS NODE"
  fi
elif ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  step "GPU" "NO GPU" "no nvidia-smi and no /dev/nvidia* device"
  finish 3 "NO GPU ON THIS NODE"
fi

# ---------------------------------------------------------------- 2. build
ARCH=${GPU_ARCH:-$(awk -F', ' 'NR == 2 { gsub(/\./, "", $6); print $6 }' "$O/gpus.csv")}
[[ "$ARCH" =~ ^[0-9]+$ ]] || ARCH=90
GEN=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$B/CMakeCache.txt" ] && GEN=(-G Ninja)
say "configure and build in $B (CUDA architecture $ARCH)"
if cmake -S "$ROOT" -B "$B" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCOLLKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
     ${NVCC:+-DCMAKE_CUDA_COMPILER="$NVCC"} "${MPI_CMAKE[@]}" \
     ${NLIB:+-DCOLLKIT_NCCL_LIBRARY="$NLIB"} ${NINC:+-DCOLLKIT_NCCL_INCLUDE_DIR="$(dirname "$NINC")"} \
     > "$O/configure.log" 2>&1 &&
   run_for 300 cmake --build "$B" -j "$(nproc)" > "$O/build.log" 2>&1; then
  step "build" PASS "$(grep -o 'collkit: CUDA.*' "$O/configure.log" | head -1)"
  # The trainer (host and device) is built where OpenBLAS, the host
  # reference, is there.
  grep -q "OpenBLAS not found" "$O/configure.log" &&
    md "| trainer | not built | no OpenBLAS on this node: no host trainer to compare the device's with |"
else
  step "build" FAIL "see configure.log / build.log: $(grep -m1 -iE 'error' "$O/configure.log" "$O/build.log" | cut -c1-200)"
  finish 1 "FAILED"
fi
BIN=$B/bin
MPIRUN=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# ---------------------------------------------------------------- 3. the probe
probe=0; NGPU=$("$BIN/collbench" --gpus 2> "$O/probe.txt") || probe=$?
if [ $probe = 3 ]; then
  step "GPU" "NO GPU" "$(sed 's/^collbench: //' "$O/probe.txt")"
  finish 3 "NO USABLE GPU (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>})"
elif [ $probe != 0 ]; then
  step "GPU" FAIL "$(sed 's/^collbench: //' "$O/probe.txt")"
  finish 1 "FAILED"
fi
step "GPU" PASS "$NGPU device(s) visible to the ranks"

# ---------------------------------------------------------------- 4. GPU tests
# One ctest run, one at a time (every test takes the GPUs), one row each.
(cd "$B" && run_for 300 ctest -V -j1 -R '^(unit\.cuda_logic|gpu\.)' --timeout 200 --output-on-failure) \
    > "$O/ctest.log" 2>&1
# "K/N Test #ID: NAME .... Passed 1.2 sec" -> "ID NAME VERDICT SECONDS"; -V
# prefixes each test's own output with "ID: ".
awk '/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / { id = $3; sub(/^#/, "", id); sub(/:$/, "", id)
       print id, $4, ($0 ~ /Passed/ ? "PASS" : $0 ~ /Not Run|Skipped/ ? "skipped" : "FAIL"), $(NF - 1) }' \
    "$O/ctest.log" > "$O/ctest.verdicts"
[ -s "$O/ctest.verdicts" ] || step "ctest (the GPU tests)" FAIL "no test ran: $(tail -1 "$O/ctest.log" | cut -c1-200)"
while read -r id name verdict secs; do
  case $verdict in
    PASS) step "$name" PASS "${secs} s" ;;
    skipped) md "| $name | not run | $(grep -m1 -E "^$id: SKIP" "$O/ctest.log" | sed "s/^$id: //" | cut -c1-160) |" ;;
    *) step "$name" FAIL "$(grep -m1 -E "^$id: .*(FAIL|rror)" "$O/ctest.log" | sed "s/^$id: //" | cut -c1-200) (ctest.log)" ;;
  esac
done < "$O/ctest.verdicts"

# ---------------------------------------------------------------- 5. collcheck
# The device algorithms, from the registry (column 2 names cuda).
device_algos() {   # device_algos SKIP_REGEX
  "$BIN/collbench" --algo list | awk -v skip="$1" 'NR > 1 && /^[A-Za-z0-9_]/ && $2 ~ /cuda/ && $1 !~ skip { printf "%s%s", s, $1; s = "," }'
}
for p in 1 2 3; do
  skip='^$'; [ "$NGPU" -lt $p ] && skip='^nccl$'
  algos=$(device_algos "$skip")
  say "collcheck --device cuda --quick at p=$p: $algos"
  run_for 200 "${MPIRUN[@]}" -np $p "$BIN/collcheck" --device cuda --algo "$algos" --quick \
      > "$O/collcheck_p$p.log" 2>&1; rc=$?
  for a in ${algos//,/ }; do
    pass=$(grep -cE "^$a +n=.*PASS$" "$O/collcheck_p$p.log"); fail=$(grep -cE "^$a +n=.*FAIL" "$O/collcheck_p$p.log")
    if [ "$fail" = 0 ] && [ "$pass" -gt 0 ] && [ $rc = 0 ]; then step "collcheck $a p=$p" PASS "$pass cases"
    elif [ "$fail" = 0 ] && [ "$pass" -gt 0 ]; then step "collcheck $a p=$p" PASS "$pass cases (the run ended with exit $rc)"
    else step "collcheck $a p=$p" FAIL "$pass passed, $fail failed (exit $rc; collcheck_p$p.log)"
    fi
  done
  [ $rc = 0 ] || step "collcheck p=$p" FAIL "exit $rc: $(tail -1 "$O/collcheck_p$p.log" | cut -c1-200)"
  [ "$skip" = '^$' ] || md "| collcheck nccl p=$p | not run | $p ranks on $NGPU GPU(s): NCCL refuses ranks that share a GPU (test_gpu checks the refusal) |"
done

# ---------------------------------------------------------------- 6. sweep
for p in 1 2; do
  skip='^$'; [ "$NGPU" -lt $p ] && skip='^nccl$'
  setup="$p rank(s) on $NGPU GPU(s)"; [ "$NGPU" -lt $p ] && setup="time-shared: $p ranks on $NGPU GPU"
  say "sweep p=$p ($setup)"
  if run_for 100 "${MPIRUN[@]}" -np $p "$BIN/collbench" --device cuda --algo "$(device_algos "$skip")" \
       -b 8 -e 64M -f 8 -n 5 -w 2 --time-budget 0.2 -c 1 --model none --place out --csv "$O/sweep_p$p.csv" \
       > "$O/sweep_p$p.txt" 2>&1; then
    step "sweep p=$p" PASS "$setup"
  else
    step "sweep p=$p" FAIL "exit $?, $setup: $(grep -m1 -iE 'error|wrong|FAIL' "$O/sweep_p$p.txt" | cut -c1-200)"
  fi
done
# ---------------------------------------------------------------- 6b. the trainer
# The default model's samples/s at p = 1, host and device, 3 epochs: the
# steady rate (after the first epoch, which holds the warm-up) and the whole.
sps() { grep '"type":"summary"' "$1" 2>/dev/null | sed 's/.*"samples_per_s":\([0-9.e+-]*\),.*"steady_samples_per_s":\([0-9.e+-]*\).*/\2 \1/'; }
if [ -x "$BIN/tagtrain" ] && ! grep -q "no Made With ML data" "$O/ctest.log"; then
  for dev in cpu cuda; do
    run_for 120 "${MPIRUN[@]}" -np 1 "$BIN/tagtrain" --device $dev --epochs 3 --no-save --quiet \
        --log "$O/trainer_$dev.jsonl" > "$O/trainer_$dev.txt" 2>&1 ||
      step "tagtrain --device $dev" FAIL "$(grep -m1 'tagtrain' "$O/trainer_$dev.txt" | cut -c1-200)"
  done
  TRAINER_SPS=$(for dev in cpu cuda; do read -r st all < <(sps "$O/trainer_$dev.jsonl"); echo "$dev ${st:-?} ${all:-?}"; done |
    awk '{ printf "| %s | %.0f | %.0f |\n", $1 == "cpu" ? "host (OpenBLAS, all cores)" : "device (--device cuda)", $2, $3 }')
  say "trainer, default model, p = 1: $(echo "$TRAINER_SPS" | tr '\n' ' ')"
fi
md ""; md "## Bandwidth at the largest size (GB/s; collbench --device cuda, out of place)"; md ""
md "At p = 1 the bus bandwidth is 0 by definition (nothing crosses a link): the algorithm bandwidth"
md "(bytes / time) shows the cost of one call on one GPU instead."; md ""
md "| algorithm | algbw p = 1 | busbw p = 2 |"; md "|---|---|---|"
cat "$O"/sweep_p*.csv 2>/dev/null | awk -F, '
  $1 == "algo" { next }
  { if ($3 + 0 >= big[$1, $2] + 0) { big[$1, $2] = $3; bw[$1, $2] = $2 == 1 ? $12 : $13 }; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
  END { for (i = 1; i <= n; i++) { a = order[i]; printf "| %s | %s | %s |\n", a, ((a, 1) in bw) ? bw[a, 1] : "-", ((a, 2) in bw) ? bw[a, 2] : "-" } }' >> "$REPORT"
[ "$NGPU" -lt 2 ] && md "" && md "p = 2 time-shares one GPU: it measures the algorithms' overheads, not an interconnect."
# How far the device is from the host, as the tests measured it.
if grep -qE '(within|max \|a - b\|)' "$O/ctest.log"; then
  md ""; md "## The device trainer against the host's (ckptdiff: max |a - b| / (1 + |a|))"; md ""; md '```'
  grep -E '^[0-9]+: .*(parameters within|: ckptdiff: )' "$O/ctest.log" |
    sed -e 's/^[0-9]*: //' -e 's/ckptdiff: [0-9]* parameters; max |a - b| \/ (1 + |a|) = \([0-9.e+-]*\) at \([^ ]* \[[^]]*\]\).*/\1 (at \2)/' >> "$REPORT"
  md '```'
fi
if [ -n "${TRAINER_SPS:-}" ]; then
  md ""; md "## The trainer (tagtrain, default model, p = 1, 3 epochs; samples/s of the training steps)"; md ""
  md "| trainer | samples/s after epoch 1 | samples/s, all 3 epochs (epoch 1 holds the warm-up) |"; md "|---|---|---|"
  md "$TRAINER_SPS"
fi

if [ ${#FAILED[@]} = 0 ]; then finish 0 "PASS"; else finish 1 "FAILED: ${FAILED[*]}"; fi
