#!/usr/bin/env bash
# compare.sh [-r ROUNDS] [-b BUILD] [-e EPOCHS] [-F FEATURES] [-H HIDDEN] — tagtrain against PyTorch on the
# same model, measured in the same run, round after round (a shared machine's
# load changes from minute to minute: each round's ratio compares runs made
# seconds apart; the spread over rounds says how far to trust it).
#
# Each round runs, one after the other, every process with one thread:
#   p = 1:  tagtrain --batch 32                vs  compare_pytorch.py --batch 32
#           ratio = tagtrain samples/s / PyTorch samples/s
#   p = 2:  weak scaling with a local batch of 16 rows per rank:
#           tagtrain --batch 16 at p = 1 and --batch 32 at p = 2 (dense all-reduce
#           of the whole gradient buffer): ring on the mpi transport (tt), and
#           tagtrain's default (shm: --algo auto, twoshot on the shm transport,
#           where the ranks reduce straight out of each other's gradient buffers)
#           vs compare_ddp.py --np 2 --local-batch 16 (DDP, gloo)
#           efficiency = samples/s(2) / (2 samples/s(1)), each from its own pair
# and prints one line per round and the min and median of every figure.
# Every pair that makes a ratio is run in ABBA order (compare_ddp.py does the
# same for its own pair) and each figure is the mean of its two runs.
#
# PyTorch is optional: without it (PYTHON, else python3, else /usr/bin/python3
# with Debian's python3-torch) only tagtrain's figures are printed, and
# PyTorch's columns say n/a.
#
# -F and -H set the model's hashed features and hidden width on both sides
# (default: tagtrain's own, 65536 and 128); the test bench.compare runs a tiny
# model for one round of one epoch.
set -euo pipefail
ROUNDS=3 BUILD=build EPOCHS=5 FEATURES=65536 HIDDEN=128
usage() { echo "usage: compare.sh [-r ROUNDS] [-b BUILD] [-e EPOCHS] [-F FEATURES] [-H HIDDEN]" >&2; exit 2; }
while getopts "r:b:e:F:H:" opt; do
  case $opt in
    r) ROUNDS=$OPTARG ;; b) BUILD=$OPTARG ;; e) EPOCHS=$OPTARG ;; F) FEATURES=$OPTARG ;; H) HIDDEN=$OPTARG ;;
    *) usage ;;
  esac
done
[ $OPTIND -gt $# ] || { echo "compare.sh: unexpected argument: ${!OPTIND}" >&2; usage; }
for v in "$ROUNDS" "$EPOCHS" "$FEATURES" "$HIDDEN"; do
  case $v in ''|*[!0-9]*|0) echo "compare.sh: want a whole number > 0, got '$v'" >&2; usage ;; esac
done
MODEL=(--features "$FEATURES" --hidden "$HIDDEN")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) BIN=$BUILD/bin/tagtrain ;; *) BIN=$ROOT/$BUILD/bin/tagtrain ;; esac   # -b: absolute, or from the top
[ -x "$BIN" ] || { echo "compare.sh: $BIN not found: build first" >&2; exit 1; }
PY=
for c in "${PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$c" ] && "$c" -c 'import torch' 2>/dev/null && { PY=$c; break; }
done
[ -z "$PY" ] && echo "compare.sh: PyTorch not found (PYTHON, python3, /usr/bin/python3): tagtrain's figures only"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 --mca btl self,vader)
W=$(mktemp -d /tmp/collkit_compare.XXXXXX)
trap 'rm -rf "$W"' EXIT

# One tagtrain run, its log in $W/log: train NP [OPTIONS...]. tagtrain's --log
# never replaces a file, so the last run's log is removed first (it is ours).
train() {
  local np=$1; shift
  rm -f "$W/log"
  "${MPIRUN[@]}" -np "$np" "$BIN" "${MODEL[@]}" "$@" --threads 1 --no-save --quiet --log "$W/log" > "$W/out" 2>&1 ||
    { echo "compare.sh: tagtrain -np $np $* failed:" >&2; cat "$W/out" >&2; exit 1; }
}
# samples/s of one tagtrain run: tt P GLOBAL_BATCH [OPTIONS...]
tt() {
  local np=$1 batch=$2; shift 2
  train "$np" "$@" --batch "$batch" --epochs "$EPOCHS"
  local v; v=$(sed -n 's/.*"type":"summary".*"samples_per_s":\([0-9.e+-]*\),.*/\1/p' "$W/log")
  [ -n "$v" ] || { echo "compare.sh: no samples_per_s in tagtrain's log (-np $np $*)" >&2; exit 1; }
  echo "$v"
}

# The PyTorch scripts feed random rows of tagtrain's density: measure it
# (non-zeros per training row with the current default features).
train 1 --epochs 1
NNZ=$(sed -n 's/.*"type":"run".*"nnz_per_row":\([0-9.e+-]*\).*/\1/p' "$W/log" | awk '{ printf "%.0f", $1 }')
[ -n "$NNZ" ] && [ "$NNZ" -gt 0 ] || { echo "compare.sh: no nnz_per_row in tagtrain's log" >&2; exit 1; }
echo "tagtrain's default features: $NNZ non-zeros a row (the PyTorch scripts' random rows get as many)"

printf "%5s %10s %10s %7s | %10s %10s %7s %10s %7s %10s %10s %7s\n" round tt_p1 torch_p1 ratio tt_1 tt_2 tt_eff shm_2 shm_eff \
  ddp_1 ddp_2 ddp_eff
# One PyTorch p = 1 run: samples/s, or NaN.
torch1() {
  "$PY" "$ROOT/trainer/compare_pytorch.py" "${MODEL[@]}" --nnz "$NNZ" --threads 1 --batch 32 --epochs "$EPOCHS" > "$W/py" 2>&1 || true
  local v; v=$(sed -n 's/.*: \([0-9.]*\) samples\/s$/\1/p' "$W/py")
  [ -n "$v" ] && echo "$v" || { echo "compare.sh: compare_pytorch.py failed:" >&2; tail -5 "$W/py" >&2; echo NaN; }
}
# One round's line: a figure PyTorch did not give (NaN) and every ratio made
# from one print n/a, so that no awk divides by a word.
row() {
  awk -v r="$1" -v a="$2" -v b="$3" -v s1="$4" -v s2="$5" -v s3="$6" -v t1="$7" -v t2="$8" '
    function ok(x) { return x ~ /^[0-9.]+([eE][-+]?[0-9]+)?$/ && x + 0 > 0 }
    function f(x, w, fmt) { return ok(x) ? sprintf(fmt, x) : sprintf("%" w "s", "n/a") }
    function q(x, y, k) { return ok(x) && ok(y) ? x / (k * y) : "n/a" }
    BEGIN {
      printf "%5d %s %s %s | %s %s %s %s %s %s %s %s\n", r, f(a, 10, "%10.0f"), f(b, 10, "%10.0f"),
        f(q(a, b, 1), 7, "%7.2f"), f(s1, 10, "%10.0f"), f(s2, 10, "%10.0f"), f(q(s2, s1, 2), 7, "%7.3f"),
        f(s3, 10, "%10.0f"), f(q(s3, s1, 2), 7, "%7.3f"), f(t1, 10, "%10.0f"), f(t2, 10, "%10.0f"), f(q(t2, t1, 2), 7, "%7.3f")
    }'
}
# Within a round every pair of figures is measured in ABBA order (A B B A,
# each column the mean of its two runs): a drift of the machine's speed
# during the round then weighs on both sides of a ratio alike.
mean2() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.3f", (x + y) / 2 }'; }
for r in $(seq 1 "$ROUNDS"); do
  b=NaN; t1=NaN; t2=NaN
  a1=$(tt 1 32)
  [ -n "$PY" ] && b1=$(torch1) && b2=$(torch1) && b=$(mean2 "$b1" "$b2")
  a=$(mean2 "$a1" "$(tt 1 32)")
  s1a=$(tt 1 16); s2a=$(tt 2 32 --algo ring); s3a=$(tt 2 32)
  s3=$(mean2 "$s3a" "$(tt 2 32)"); s2=$(mean2 "$s2a" "$(tt 2 32 --algo ring)"); s1=$(mean2 "$s1a" "$(tt 1 16)")
  if [ -n "$PY" ]; then
    # fresh ports each round: the last round's may still be in TIME_WAIT
    "$PY" "$ROOT/trainer/compare_ddp.py" "${MODEL[@]}" --nnz "$NNZ" --np 2 --local-batch 16 --epochs "$EPOCHS" \
        --port $((29533 + 2 * r)) > "$W/ddp" 2>&1 || true
    t=$(sed -n 's/^p=1: \([0-9.]*\) samples\/s *p=2: \([0-9.]*\) samples\/s.*/\1 \2/p' "$W/ddp")
    if [ -n "$t" ]; then read -r t1 t2 <<< "$t"
    else echo "compare.sh: compare_ddp.py failed:" >&2; tail -5 "$W/ddp" >&2; fi
  fi
  row "$r" "$a" "$b" "$s1" "$s2" "$s3" "$t1" "$t2" | tee -a "$W/rounds"
done
# min and median of every column over the rounds (n/a where no round gave one)
awk '{ for (i = 2; i <= NF; i++) if ($i == "|") bar[i] = 1; else if ($i != "n/a") v[i, NR] = $i; n = NR; nf = NF }
  END {
    for (k = 0; k < 2; k++) {
      printf "%5s", k ? "med" : "min"
      for (i = 2; i <= nf; i++) {
        w = i == 4 || i == 8 || i == 10 || i == 13 ? 7 : 10
        if (i in bar) { printf " |"; continue }
        m = 0; for (j = 1; j <= n; j++) if ((i, j) in v) a[++m] = v[i, j] + 0
        if (m == 0) { printf " %" w "s", "n/a"; continue }
        for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] < a[x]) { t = a[x]; a[x] = a[y]; a[y] = t }
        q = k ? (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) : a[1]
        printf (w == 7 ? " %7.3f" : " %10.0f"), q
      }
      printf "\n"
    }
  }' "$W/rounds"
