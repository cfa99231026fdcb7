#!/bin/sh
# kill.sh BINDIR "MPIRUN [FLAGS]" — kill -9 a training run at many moments,
# then resume it: best.ckpt and last.ckpt must both be valid and byte-equal to
# those of an uninterrupted run, and no temporary file may be left behind.
#
# Two ways to kill:
#   exact moments, by the test hook (COLLKIT_FAULT=ckpt/POINT:*:KILL:N, ckpt.h):
#   rank 0 sends itself SIGKILL half-way through writing a checkpoint, after
#   writing it but before the rename, between best.ckpt and last.ckpt, and
#   between two saves;
#   timed kills: every rank of a running job gets SIGKILL after a delay,
#   wherever it is (in a step, in the all-reduce, in a write, in an fsync).
# After a kill the run is restarted the way a user would: --resume DIR/last.ckpt
# when there is one, else the same command from scratch.
set -u
BIN=$1 MPIRUN=$2
W=$(mktemp -d /tmp/collkit_trainer_kill.XXXXXX)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }

. "$(dirname "$0")/../lib/need_data.sh"
skip_without_data

# Restart after a kill and compare with the reference directory $1.
# $2: the save directory, $3..: the run's options.
recover_and_compare() {
  ref=$1 dir=$2 what=$3
  shift 3
  if [ -f "$dir/last.ckpt" ]; then
    $MPIRUN -np 2 "$BIN/tagtrain" --resume "$dir/last.ckpt" --save "$dir" > "$W/rec" 2>&1
  else
    $MPIRUN -np 2 "$BIN/tagtrain" "$@" --save "$dir" > "$W/rec" 2>&1
  fi
  check '[ $? -eq 0 ]' "$what: restart failed: $(grep tagtrain "$W/rec")"
  check 'cmp -s "$ref/last.ckpt" "$dir/last.ckpt"' "$what: last.ckpt differs from the uninterrupted run's"
  check 'cmp -s "$ref/best.ckpt" "$dir/best.ckpt"' "$what: best.ckpt differs from the uninterrupted run's"
  check '[ -z "$(ls "$dir" | grep -v "^last.ckpt$" | grep -v "^best.ckpt$")" ]' "$what: left behind: $(ls "$dir" | tr '\n' ' ')"
  "$BIN/tagpredict" --checkpoint "$dir/best.ckpt" --title "object detection" > /dev/null 2>&1
  check '[ $? -eq 0 ]' "$what: tagpredict cannot read best.ckpt"
}

# ---- exact moments (small model, a save every 2 epochs: files written at epochs 2, 4, 6)
RUN="--features 1024 --hidden 32 --batch 32 --epochs 6 --save-every 2 --dropout 0.5 --val-frac 0.2"
$MPIRUN -np 2 "$BIN/tagtrain" $RUN --save "$W/ref" > "$W/out" 2>&1
check '[ $? -eq 0 ] && [ -f "$W/ref/best.ckpt" ] && [ -f "$W/ref/last.ckpt" ]' "reference run failed: $(cat "$W/out")"
for point in write:1 rename:2 between:1 write:3 between:2 epoch:3 rename:6; do
  rm -rf "$W/k"
  COLLKIT_FAULT="ckpt/${point%%:*}:*:KILL:${point#*:}" $MPIRUN -np 2 "$BIN/tagtrain" $RUN --save "$W/k" > "$W/killed" 2>&1; rc=$?
  check '[ $rc -ne 0 ]' "$point: the run was not killed (rc $rc)"
  left=$(ls "$W/k" 2>/dev/null | tr '\n' ' ')
  echo "kill at $point: left $left"
  recover_and_compare "$W/ref" "$W/k" "kill at $point (left: $left)" $RUN
  case $point in
    between:2) check 'grep -q "repaired .*best.ckpt" "$W/rec"' "between:2: the newer best.ckpt was not repaired: $(cat "$W/rec")" ;;
    write:*|rename:*) [ -n "$(echo "$left" | grep tmp)" ] && check 'grep -q "removed 1 temporary file" "$W/rec"' \
                      "$point: the restart did not say it removed the temporary file: $(head -5 "$W/rec")" ;;
  esac
done

# ---- timed kills: every rank, wherever it is. A bigger model (4 MiB state
# checkpoints) and a save every epoch, so many kills land in a write.
RUN="--features 16384 --hidden 32 --batch 32 --epochs 4 --save-every 1 --dropout 0.5 --val-frac 0.2"
$MPIRUN -np 2 "$BIN/tagtrain" $RUN --save "$W/ref2" > "$W/out" 2>&1
check '[ $? -eq 0 ]' "reference run 2 failed: $(cat "$W/out")"
for delay in 0.5 1.0 1.5 2.0; do
  rm -rf "$W/t"
  $MPIRUN -np 2 "$BIN/tagtrain" $RUN --save "$W/t" > "$W/killed" 2>&1 &
  job=$!
  sleep "$delay"
  for pid in $(ps -o pid= --ppid "$job" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  wait "$job"
  left=$(ls "$W/t" 2>/dev/null | tr '\n' ' ')
  echo "kill -9 after ${delay}s: left $left"
  recover_and_compare "$W/ref2" "$W/t" "kill -9 after ${delay}s (left: $left)" $RUN
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
