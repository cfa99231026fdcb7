#!/bin/sh
# faults.sh BINDIR "MPIRUN [FLAGS]" SET — a rank of a training job is stopped
# (SIGSTOP: a hung or descheduled process) or killed (SIGKILL) at a known
# point, by the test hook COLLKIT_FAULT: phase/PHASE:RANK:SIG (tagtrain's
# phases) and shm/POINT:RANK:SIG (the shm transport's setup). Every such run must
#   - end by itself (the job, stopped rank included: a hang is this script's
#     `timeout` ending it, which fails the case), with a non-zero status;
#   - name the rank: the watchdog's "rank R did not answer" for a stop,
#     mpirun's "process rank R ... exited on signal 9" for a kill;
#   - say it waited no longer than two bounds (the number in its message);
#   - leave no name of ours in /dev/shm;
#   - leave checkpoints from which --resume (or, with none yet, the same
#     command again) reproduces the uninterrupted run's last.ckpt byte for
#     byte.
# And under ckrun --restarts (the supervisor): the job restarted from the
# last checkpoint, on fewer ranks with --min-np, ends equal to the
# uninterrupted run (within ckptdiff's tolerance when the rank count changed).
# SET: quick (the subset make test runs) or full (ctest -L faults).
set -u
BIN=$1 MPIRUN=$2 SET=$3
T=3                      # COLLKIT_TIMEOUT: the bound
HANG=60                  # a run still going after this is a hang
W=$(mktemp -d /tmp/collkit_faults.XXXXXX)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }

"$BIN/tagsynth" --rows 480 --seed 1 --out "$W/d.csv" > /dev/null &&
"$BIN/tagsynth" --rows 120 --seed 2 --out "$W/h.csv" > /dev/null || { echo "FAIL: tagsynth"; exit 1; }
DATA="--data $W/d.csv --holdout $W/h.csv"
RUN="$DATA --features 256 --hidden 8 --epochs 4 --save-every 1 --val-frac 0.2 --dropout 0 --quiet"
NP=3

shm_names() { ls /dev/shm 2>/dev/null | grep collkit | sort; }

# ref NAME OPTIONS...: the uninterrupted run, into $W/ref-NAME.
ref() {
  name=$1; shift
  $MPIRUN -np $NP "$BIN/tagtrain" $RUN "$@" --save "$W/ref-$name" > "$W/ref.out" 2>&1
  check '[ $? -eq 0 ] && [ -f "$W/ref-$name/last.ckpt" ]' "reference run $name failed: $(cat "$W/ref.out")"
}

# fault CASE REF SIG RANK ENVVAR=VALUE OPTIONS...: one faulted run, then its recovery.
fault() {
  case_=$1 refname=$2 sig=$3 rank=$4 hook=$5
  shift 5
  d="$W/k-$(echo "$case_" | tr -c 'a-z0-9\n' '_')"
  rm -rf "$d"
  before=$(shm_names)
  env COLLKIT_TIMEOUT=$T "$hook" timeout -k 10 $HANG $MPIRUN -np $NP "$BIN/tagtrain" $RUN "$@" --save "$d" \
    > "$W/f.out" 2>&1
  rc=$?
  check '[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] || grep -q "exited on signal 9" "$W/f.out"' \
        "$case_: rc $rc: $( [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "a hang, ended after $HANG s" || cat "$W/f.out")"
  if [ "$sig" = STOP ]; then
    check 'grep -q "rank $rank did not answer (stopped, stalled or gone)" "$W/f.out"' \
          "$case_: the stopped rank $rank is not named: $(cat "$W/f.out")"
    # The waits it reports: none longer than two bounds.
    waited=$(sed -n 's/.*waited \([0-9.]*\) s for the other ranks.*/\1/p' "$W/f.out" | sort -n | tail -1)
    check '[ -n "$waited" ] && awk "BEGIN { exit !($waited <= 2 * $T) }"' "$case_: waited '$waited' s (bound $T s)"
  else
    check 'grep -q "process rank $rank .*exited on signal 9" "$W/f.out"' \
          "$case_: the killed rank $rank is not named: $(cat "$W/f.out")"
  fi
  after=$(shm_names)
  left=$(printf '%s\n' "$after" | grep -vxF "$before" | grep . )
  check '[ -z "$left" ]' "$case_: left in /dev/shm: $left"
  # Recovery: --resume from what was saved, else the same command again.
  if [ -f "$d/last.ckpt" ]; then
    $MPIRUN -np $NP "$BIN/tagtrain" $DATA --quiet "$@" --resume "$d/last.ckpt" --save "$d" > "$W/r.out" 2>&1
  else
    $MPIRUN -np $NP "$BIN/tagtrain" $RUN "$@" --save "$d" > "$W/r.out" 2>&1
  fi
  check '[ $? -eq 0 ]' "$case_: the run after the fault failed: $(cat "$W/r.out")"
  check 'cmp -s "$W/ref-$refname/last.ckpt" "$d/last.ckpt"' \
        "$case_: last.ckpt after recovery differs from the uninterrupted run's: $("$BIN/ckptdiff" "$W/ref-$refname/last.ckpt" "$d/last.ckpt" 2>&1 | head -3)"
  echo "$case_: rc $rc, $(grep -o "rank [0-9]* did not answer\|process rank [0-9]* .*signal 9" "$W/f.out" | head -1)"
}

# restart CASE NP MIN REF SAME HOOK...: the job under ckrun --restarts 1
# --min-np MIN; a fault in its first attempt; it must be restarted from the
# last checkpoint on one rank fewer (not below MIN) and end equal to the
# uninterrupted run REF (SAME: cmp, byte for byte; else ckptdiff's tolerance).
restart() {
  case_=$1 np=$2 min=$3 refname=$4 same=$5
  shift 5
  d="$W/c-$np-$min"
  rm -rf "$d" "$W/once"
  env COLLKIT_TIMEOUT=$T "$1:once=$W/once" timeout -k 10 $((2 * HANG)) \
    "$BIN/ckrun" -np $np --restarts 1 --min-np $min ${WRAP:-} "$BIN/tagtrain" $RUN --save "$d" > "$W/c.out" 2>&1
  rc=$?
  exp=$np; [ $np -gt $min ] && exp=$((np - 1))   # one rank fewer a restart, down to --min-np
  check '[ $rc -eq 0 ] && grep -q "restart 1 of 1 on $exp ranks*, from $d/last.ckpt" "$W/c.out" &&
         grep -q "ckrun: 2 attempts in" "$W/c.out"' "$case_: rc $rc: $(cat "$W/c.out")"
  if [ "$same" = same ]; then
    check 'cmp -s "$W/ref-$refname/last.ckpt" "$d/last.ckpt"' "$case_: last.ckpt differs from the uninterrupted run's"
  else
    "$BIN/ckptdiff" "$W/ref-$refname/last.ckpt" "$d/last.ckpt" > "$W/cd.out" 2>&1
    check '[ $? -eq 0 ]' "$case_: not within the data-parallel tolerance: $(cat "$W/cd.out")"
  fi
  echo "$case_: rc $rc, $(grep "^ckrun: 2 attempts" "$W/c.out")"
}

ref auto
ref bucketed --algo ring --bucket-mb 0.005
if [ "$SET" = quick ]; then
  # tagtrain behind a wrapper: ckrun finds it there and resumes it all the same.
  WRAP="nice -n 1" restart "ckrun: a rank killed, restarted on fewer ranks" 3 2 auto tolerance COLLKIT_FAULT="phase/train (epoch 3):2:KILL"
  fault "stop in train, bucketed" bucketed STOP 1 COLLKIT_FAULT="phase/train (epoch 3):1:STOP" --algo ring --bucket-mb 0.005
  fault "stop in save" auto STOP 0 COLLKIT_FAULT="phase/save (epoch 2):0:STOP"
  fault "kill in shm setup" auto KILL 2 COLLKIT_FAULT=shm/3:2:KILL
else
  for sig in STOP KILL; do
    for ph in load featurise setup "train (epoch 1)" "train (epoch 3)" "eval (epoch 2)" "save (epoch 2)" "holdout"; do
      r=$(( $(printf '%s' "$ph" | wc -c) % NP ))
      [ "$ph" = "save (epoch 2)" ] && r=0   # only rank 0 saves
      fault "$sig in $ph" auto $sig $r COLLKIT_FAULT="phase/$ph:$r:$sig"
    done
    fault "$sig in train, bucketed" bucketed $sig 1 COLLKIT_FAULT="phase/train (epoch 2):1:$sig" --algo ring --bucket-mb 0.005
    for point in 1 2 3 4 5; do
      fault "$sig at shm setup point $point" auto $sig $((point % NP)) COLLKIT_FAULT=shm/$point:$((point % NP)):$sig
    done
  done
  restart "ckrun: a rank stopped, restarted on as many" 3 3 auto same COLLKIT_FAULT="phase/eval (epoch 2):1:STOP"
  restart "ckrun: a rank killed, restarted on one" 3 1 auto tolerance COLLKIT_FAULT="phase/save (epoch 3):0:KILL"
  # collcheck: a rank stopped while the cases run (SIGSTOP from here, to one
  # of this mpirun's own processes) is named, and the run ends by itself.
  $MPIRUN -np $NP "$BIN/collcheck" --algo ring,rd --count 1021 --repeat 100000 --timeout $T > "$W/cc.out" 2>&1 &
  job=$!
  for i in $(seq 100); do grep -q "^ring " "$W/cc.out" && break; sleep 0.1; done
  victim=$(pgrep -P $job -x collcheck | sed -n 2p)
  [ -n "$victim" ] && kill -STOP "$victim"
  ( sleep $HANG; kill $job 2> /dev/null ) & guard=$!
  wait $job; rc=$?
  kill $guard 2> /dev/null
  [ -n "$victim" ] && kill -KILL "$victim" 2> /dev/null
  check '[ -n "$victim" ] && [ $rc -ne 0 ] && grep -q "rank [0-9] did not answer (stopped, stalled or gone)" "$W/cc.out"' \
        "collcheck, a rank stopped: rc $rc, victim '$victim': $(tail -5 "$W/cc.out")"
  echo "collcheck, a rank stopped: rc $rc, $(grep -o "rank [0-9] did not answer" "$W/cc.out" | head -1)"
  # A fault while resuming: the state read, the ranks comparing it.
  ref shm --transport shm --algo ring
  $MPIRUN -np $NP "$BIN/tagtrain" $RUN --transport shm --algo ring --stop-after 2 --save "$W/half" > "$W/h.out" 2>&1
  check '[ $? -eq 0 ]' "half run failed: $(cat "$W/h.out")"
  for sig in STOP KILL; do
    rm -rf "$W/res" && cp -r "$W/half" "$W/res"
    env COLLKIT_TIMEOUT=$T COLLKIT_FAULT="phase/resume:1:$sig" timeout -k 10 $HANG \
      $MPIRUN -np $NP "$BIN/tagtrain" $DATA --quiet --transport shm --algo ring --resume "$W/res/last.ckpt" \
        --save "$W/res" > "$W/f.out" 2>&1
    check '[ $? -ne 0 ] && grep -q "rank 1 did not answer\|process rank 1 .*signal 9" "$W/f.out"' \
          "$sig in resume: $(cat "$W/f.out")"
    $MPIRUN -np $NP "$BIN/tagtrain" $DATA --quiet --transport shm --algo ring --resume "$W/res/last.ckpt" \
      --save "$W/res" > "$W/r.out" 2>&1
    check '[ $? -eq 0 ] && cmp -s "$W/ref-shm/last.ckpt" "$W/res/last.ckpt"' "$sig in resume: recovery: $(cat "$W/r.out")"
  done
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
