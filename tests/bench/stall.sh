#!/usr/bin/env bash
# stall.sh COLLBENCH TRANSPORT ALGO MPIRUN [FLAGS...] — collbench never hangs
# and never loses a failed write:
#   1. one of 4 ranks is stopped (SIGSTOP) mid-sweep of ALGO on TRANSPORT: the
#      job must end with a non-zero status, within the watchdog bound
#      (COLLKIT_TIMEOUT=4) plus a margin, with the watchdog's or the bounded
#      wait's message. On shm, ring stalls in the point-to-point protocol's
#      waits and twoshot in the flag barriers of ck_shm_wait;
#   2. (TRANSPORT mpi) --csv, --json and --trace to a full disk (/dev/full) and
#      into a folder that does not exist: non-zero status and a message naming
#      the file.
set -u
B=$1 TRANSPORT=$2 ALGO=$3; shift 3
dir=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill -CONT $p 2>/dev/null; done; rm -rf "$dir"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# 1. a stopped rank. It is stopped once the table header is out: rank 0 prints
# it after a bounded agreement that every rank reaches only once MPI_Init and
# the communicator's setup are behind it (both unbounded collectives that no
# program can time out from inside). The bound is counted from the stop.
COLLKIT_TIMEOUT=4 "$@" -np 4 "$B" --transport "$TRANSPORT" --algo "$ALGO" -b 1M -e 1M -n 1000000 -w 1 -c 0 \
    --model none --time-budget 0 > "$dir/stall.out" 2>&1 &
job=$!
victim=""
for _ in $(seq 1 1200); do   # up to 120 s for a loaded machine to start 4 ranks
  if grep -q "^# algorithm" "$dir/stall.out" 2>/dev/null; then
    victim=$(pgrep -n -f -- "$B --transport $TRANSPORT --algo $ALGO -b 1M"); break
  fi
  kill -0 $job 2>/dev/null || break
  sleep 0.1
done
if [ -z "$victim" ]; then
  bad "collbench's sweep never started"; cat "$dir/stall.out"; kill $job 2>/dev/null
else
  sleep 0.5
  kill -STOP "$victim"; pids="$victim"
  start=$(date +%s)
  waited=0
  while kill -0 $job 2>/dev/null && [ $waited -lt 60 ]; do sleep 1; waited=$((waited + 1)); done
  if kill -0 $job 2>/dev/null; then
    bad "collbench still running 60 s after a rank was stopped"; kill -CONT "$victim"; kill $job
  fi
  wait $job; rc=$?
  elapsed=$(( $(date +%s) - start ))
  [ $rc -ne 0 ] && ok || bad "collbench exited 0 with a stopped rank"
  [ $elapsed -le 40 ] && ok || bad "collbench took $elapsed s after the stop to give up (bound 4 s + margin)"
  grep -Eq "watchdog: rank [0-9]+ waited|waited [0-9]+ s for the other ranks in" "$dir/stall.out" && ok \
    || { bad "no watchdog message"; cat "$dir/stall.out"; }
  grep -q "transport $TRANSPORT" "$dir/stall.out" && ok || { bad "not the $TRANSPORT transport"; head -3 "$dir/stall.out"; }
fi

# 2. result files that cannot be written
if [ "$TRANSPORT" = mpi ]; then
  for opt in --csv --json --trace; do
    for target in /dev/full "$dir/no/such/folder/out"; do
      "$@" -np 2 "$B" --algo ring -b 1K -e 4K -n 2 -w 0 -c 0 --model none $opt "$target" > "$dir/w.out" 2>&1
      rc=$?
      [ $rc -ne 0 ] && ok || bad "$opt $target: exit 0"
      grep -q "collbench: .*$target" "$dir/w.out" && ok || { bad "$opt $target: no message naming the file"; cat "$dir/w.out"; }
    done
  done
  "$@" -np 2 "$B" --pingpong -b 8 -e 64 -n 2 --csv /dev/full > "$dir/pp.out" 2>&1 && bad "--pingpong --csv /dev/full: exit 0" || ok
  "$@" -np 2 "$B" --pingpong -b 8 -e 64 -n 2 --save-model /dev/full > "$dir/pp.out" 2>&1 && bad "--save-model /dev/full: exit 0" || ok
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
