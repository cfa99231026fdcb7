# plans_lib.sh — sourced by the model-parallel tests (tp.sh, pp.sh, hybrid.sh)
# after they set BIN and MPIRUN: a work folder removed at exit, the data or a
# skip, and the helpers each of them uses. C (set by the test after sourcing)
# holds the options every run shares.
#   check COND WHY       count COND's outcome; WHY printed when it fails
#   jfield LOG TYPE KEY  KEY's value in LOG's TYPE record
#   run NP DIR OPTS...   tagtrain at NP ranks, saving in $W/DIR, logging $W/DIR.jsonl
#   same REF DIR [OPTS]  ckptdiff of the two runs' last checkpoints: equal within the tolerance
W=$(mktemp -d "/tmp/collkit_trainer_$(basename "$0" .sh).XXXXXX")
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/../lib/need_data.sh"
skip_without_data
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
jfield() { grep "\"type\":\"$2\"" "$1" | sed "s/.*\"$3\":\\([^,}]*\\).*/\\1/"; }
run() { np=$1 dir=$2; shift 2; $MPIRUN -np "$np" "$BIN/tagtrain" $C --save "$W/$dir" --log "$W/$dir.jsonl" "$@" \
          > "$W/$dir.out" 2>&1 || echo "run $dir (p = $np $*) failed: $(cat "$W/$dir.out")"; }
same() {
  ref=$1 dir=$2; shift 2
  "$BIN/ckptdiff" "$W/$ref/last.ckpt" "$W/$dir/last.ckpt" "$@" > "$W/d" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "equal within" "$W/d"' "$dir against $ref: rc $rc $(cat "$W/d")"
}
