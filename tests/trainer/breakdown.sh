#!/bin/sh
# breakdown.sh BINDIR "MPIRUN [FLAGS]" — tagtrain --breakdown's step records
# (trainer/tagtrain.c's train_step, trainer/runio.c's log_step) on a tiny
# tagsynth run at p = 2, dense and with buckets:
#   - every step record has step_s, fb_s, wait_s, comm_s and optimizer_s,
#     each >= 0, and fb + wait + comm + optimizer <= step (up to the log's
#     rounding), compute_s = fb_s + optimizer_s;
#   - calls_s (the all-reduce's calls as they ran) there, >= 0 and within the
#     step (the buckets run one after another inside it), and in a dense run
#     no more than comm_s (the call is inside the step's wait);
#   - with --breakdown, calls_entry_s and calls_proper_s (the calls taken
#     apart across the ranks: the wait for the last rank to start each, and
#     the rest), each >= 0, adding up to calls_s;
#   - without --breakdown there is no wait_s (the wait is not measured, so
#     not invented) and the other parts are still there.
set -u
BIN=$1 MPIRUN=$2
W=$(mktemp -d /tmp/collkit_breakdown.XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$BIN/tagsynth" --rows 480 --seed 1 --out "$W/d.csv" > /dev/null || { echo "FAIL: tagsynth"; exit 1; }
A="--data $W/d.csv --folds 5 --fold 5 --features 1024 --hidden 32 --epochs 2 --dropout 0 --quiet --no-save --transport mpi"
# parts LOG WANT_WAIT: every step record checked; prints "steps bad" counts.
parts() {   # parts LOG WANT_WAIT DENSE
  grep '"type":"step"' "$1" | awk -v want="$2" -v dense="$3" '
    function num(k,   m) { if (match($0, "\"" k "\":[-0-9.e+]+")) return substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3) + 0; return "none" }
    { n++; st = num("step_s"); fb = num("fb_s"); w = num("wait_s"); c = num("comm_s"); o = num("optimizer_s"); cp = num("compute_s")
      if (!want && w != "none") { print "a wait_s without --breakdown: " $0; bad++; next }
      if (want && w == "none") { print "no wait_s: " $0; bad++; next }
      if (!want) w = 0
      ca = num("calls_s"); ce = num("calls_entry_s"); cq = num("calls_proper_s")
      if (!want && (ce != "none" || cq != "none")) { print "calls taken apart without --breakdown: " $0; bad++; next }
      if (want && (ce == "none" || cq == "none")) { print "calls not taken apart: " $0; bad++; next }
      if (want) { d = ce + cq - ca; if (d < 0) d = -d
        if (ce < 0 || cq < 0 || d > 1e-5 * ca + 1e-9) { print "calls_entry_s + calls_proper_s is not calls_s: " $0; bad++; next } }
      if (st == "none" || fb == "none" || c == "none" || o == "none" || ca == "none") { print "a part missing: " $0; bad++; next }
      if (ca < 0 || ca > st * (1 + 1e-5) + 1e-9 || (dense && ca > c * (1 + 1e-5) + 1e-9)) { print "calls_s outside the collective: " $0; bad++; next }
      if (st < 0 || fb < 0 || w < 0 || c < 0 || o < 0) { print "a negative part: " $0; bad++; next }
      if (fb + w + c + o > st * (1 + 1e-5) + 1e-9) { print "the parts exceed the step: " $0; bad++; next }
      d = cp - (fb + o); if (d < 0) d = -d
      if (d > 1e-5 * cp + 1e-9) { print "compute_s is not fb_s + optimizer_s: " $0; bad++ } }
    END { print n + 0, bad + 0 }'
}
run() {   # run NAME WANT_WAIT DENSE ARGS...
  name=$1 want=$2 dense=$3; shift 3
  if ! $MPIRUN -np 2 "$BIN/tagtrain" $A --log "$W/$name.jsonl" "$@" > "$W/$name.out" 2>&1; then
    fail "$name: tagtrain failed: $(cat "$W/$name.out")"; return
  fi
  parts "$W/$name.jsonl" "$want" "$dense" > "$W/$name.parts"
  n=$(tail -1 "$W/$name.parts" | cut -d' ' -f1) nbad=$(tail -1 "$W/$name.parts" | cut -d' ' -f2)
  [ "$n" -ge 10 ] || fail "$name: $n step records, want at least 10"
  [ "$nbad" = 0 ] || fail "$name: $nbad bad step record(s): $(head -3 "$W/$name.parts")"
}
run dense 1 1 --breakdown
run bucketed 1 0 --breakdown --bucket-mb 0.01
run plain 0 1
[ "$fails" = 0 ] && echo "breakdown: all checks passed"
[ "$fails" = 0 ]
