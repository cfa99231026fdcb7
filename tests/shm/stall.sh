#!/usr/bin/env bash
# stall.sh COLLBENCH ALGO MPIRUN [FLAGS...] — a stalled rank on the shm
# transport is caught by the watchdog: one of 4 ranks is stopped (SIGSTOP)
# mid-sweep of ALGO (ring: the point-to-point protocol's waits; twoshot: the
# flag barriers of ck_shm_wait); the job must end with a non-zero status,
# within the watchdog bound (COLLKIT_TIMEOUT=4) plus a margin, and say so.
set -u
B=$1 ALGO=$2; shift 2
dir=$(mktemp -d)
victim=""
trap '[ -n "$victim" ] && kill -CONT $victim 2>/dev/null; rm -rf "$dir"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

start=$(date +%s)
COLLKIT_TIMEOUT=4 "$@" -np 4 "$B" --transport shm --algo "$ALGO" -b 1M -e 1M -n 1000000 -w 1 -c 0 --model none \
    --time-budget 0 > "$dir/stall.out" 2>&1 &
job=$!
# Wait until the sweep runs (rank 0 prints the table's header once the
# communicator exists: setting it up is collective and unbounded, so a rank
# stopped before that would hang the others in MPI), then stop the newest rank.
for _ in $(seq 1 600); do
  if grep -q "^# algorithm" "$dir/stall.out" 2>/dev/null; then
    victim=$(pgrep -n -f -- "$B --transport shm --algo $ALGO -b 1M"); break
  fi
  sleep 0.1
done
if [ -z "$victim" ]; then
  bad "collbench ranks never started"; kill $job 2>/dev/null
else
  sleep 0.5
  kill -STOP "$victim"
  waited=0
  while kill -0 $job 2>/dev/null && [ $waited -lt 60 ]; do sleep 1; waited=$((waited + 1)); done
  if kill -0 $job 2>/dev/null; then
    bad "collbench still running 60 s after a rank was stopped"; kill -CONT "$victim"; kill $job
  fi
  wait $job; rc=$?
  elapsed=$(( $(date +%s) - start ))
  [ $rc -ne 0 ] && ok || bad "collbench exited 0 with a stopped rank"
  [ $elapsed -le 40 ] && ok || bad "collbench took $elapsed s to give up (bound 4 s + margin)"
  grep -Eq "watchdog: rank [0-9]+ waited [0-9.]+ s for (rank [0-9]+ \(|(send|recv) of)|waited [0-9]+ s for the other ranks in" "$dir/stall.out" && ok \
    || { bad "no watchdog message"; cat "$dir/stall.out"; }
  grep -q "transport shm" "$dir/stall.out" && ok || { bad "not the shm transport"; head -3 "$dir/stall.out"; }
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
