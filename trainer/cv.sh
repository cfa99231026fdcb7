#!/usr/bin/env bash
# cv.sh [-k K] [-s "SEEDS"] [-j JOBS] [-b BUILD] [-o SCORES] [-v] [-- TAGTRAIN OPTIONS] — k-fold
# cross-validation of a tagtrain configuration on dataset.csv, for model
# selection. holdout.csv is never read (tagtrain --folds K --fold I does not
# open it).
#
#   trainer/cv.sh                                  the defaults, 5 folds x seeds 1 2 3
#   trainer/cv.sh -s "1 2 3 4 5" -- --hidden 128 --dropout 0.6
#
# Every (fold, seed) is one single-rank run (--folds K --fold I --seed S
# --no-save), JOBS of them at a time (default: the number of cores). A fold's
# score is the validation weighted F1 of the model tagtrain would keep: the
# epoch with the best val loss (`best_val_f1`); the F1 of the last epoch is
# shown beside it. Prints one line per run (with -v) and the mean, standard
# deviation, min and max over all K x seeds runs; exits non-zero if a run failed.
# -o SCORES keeps the per-run scores ("fold seed best_f1 last_f1 best_epoch
# seconds"), so that two configurations can be compared run by run (the same
# folds and seeds: a paired comparison, far less noisy than two means).
set -euo pipefail
K=5 SEEDS="1 2 3" JOBS=$(nproc 2>/dev/null || echo 2) BUILD=build VERBOSE=0 SAVE=
while getopts "k:s:j:b:o:v" opt; do
  case $opt in
    k) K=$OPTARG ;; s) SEEDS=$OPTARG ;; j) JOBS=$OPTARG ;; b) BUILD=$OPTARG ;; v) VERBOSE=1 ;; o) SAVE=$OPTARG ;;
    *) echo "usage: cv.sh [-k K] [-s \"SEEDS\"] [-j JOBS] [-b BUILD] [-o SCORES] [-v] [-- TAGTRAIN OPTIONS]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) BIN=$BUILD/bin/tagtrain ;; *) BIN=$ROOT/$BUILD/bin/tagtrain ;; esac   # -b: absolute, or from the top
[ -x "$BIN" ] || { echo "cv.sh: $BIN not found: build first" >&2; exit 1; }
W=$(mktemp -d /tmp/collkit_cv.XXXXXX)
trap 'rm -rf "$W"' EXIT

# Run the (fold, seed) pairs, JOBS at a time.
n=0 failed=0
pids=()
for s in $SEEDS; do
  for f in $(seq 1 "$K"); do
    "$BIN" --folds "$K" --fold "$f" --seed "$s" --no-save --quiet --threads 1 --log "$W/f${f}_s$s.jsonl" "$@" \
        > "$W/f${f}_s$s.out" 2>&1 &
    pids+=($!)
    n=$((n + 1))
    if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}" || failed=$((failed + 1)); pids=("${pids[@]:1}"); fi
  done
done
for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
if [ $failed -gt 0 ]; then
  echo "cv.sh: $failed of $n runs failed; first error:" >&2
  grep -h tagtrain "$W"/*.out | head -3 >&2
  exit 1
fi

# Scores: best-by-val-loss F1, last-epoch F1, best epoch, training time.
for s in $SEEDS; do
  for f in $(seq 1 "$K"); do
    grep '"type":"summary"' "$W/f${f}_s$s.jsonl" |
      sed 's/.*"train_time_s":\([^,]*\),.*"best_epoch":\([^,]*\),.*"best_val_f1":\([^,]*\),"last_val_f1":\([^,}]*\).*/\3 \4 \2 \1/' |
      awk -v f="$f" -v s="$s" '{ print f, s, $0 }'
  done
done > "$W/scores"
[ -n "$SAVE" ] && cp "$W/scores" "$SAVE"
[ $VERBOSE = 1 ] && awk '{ printf "fold %s seed %s: best-epoch val F1 %.4f, last-epoch %.4f, best epoch %d, %.2f s\n", $1, $2, $3, $4, $5, $6 }' "$W/scores"
awk -v k="$K" -v seeds="$SEEDS" -v opts="$*" '
  { n++; b[n] = $3; sb += $3; sl += $4; se += $5; st += $6; if (n == 1 || $3 < mn) mn = $3; if (n == 1 || $3 > mx) mx = $3 }
  END {
    m = sb / n; v = 0; for (i = 1; i <= n; i++) v += (b[i] - m) ^ 2; sd = n > 1 ? sqrt(v / (n - 1)) : 0
    printf "cv %d folds x seeds {%s}%s%s: val weighted F1 %.4f (sd %.4f, min %.4f, max %.4f; last epoch %.4f), best epoch %.1f, %.2f s a run\n",
           k, seeds, opts == "" ? "" : ", ", opts, m, sd, mn, mx, sl / n, se / n, st / n
  }' "$W/scores"
