#!/usr/bin/env bash
# trainer_path.sh SCRIPT — scripts/bench_trainer.sh's reading of tagtrain's
# step records for the trainer's own path (step_quartiles, taken from the
# script itself), on a fixed log: the median and quartiles of a field over
# the epochs after the first (the first epoch's steps left out), a field the
# records lack "NaN NaN NaN", and a name that is the tail of another
# (calls_s beside calls_proper_s) read as itself.
set -u
S=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collkit-tpath-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
eval "$(sed -n '/^step_quartiles() {/,/^}/p' "$S")"
declare -F step_quartiles > /dev/null || { echo "FAIL: no step_quartiles in $S"; exit 1; }
{ echo '{"type":"run","program":"tagtrain","gradient_bytes":400}'
  # epoch 1: huge times, to be left out
  for k in 0 1; do
    echo "{\"type\":\"step\",\"epoch\":1,\"step\":$k,\"comm_s\":9,\"calls_s\":9,\"calls_proper_s\":9}"
  done
  # epochs 2-3: comm_s 1..8 (median 4 by the script's rank, quartiles 2 and 6)
  for k in 1 2 3 4 5 6 7 8; do
    e=$(( k <= 4 ? 2 : 3 ))
    echo "{\"type\":\"step\",\"epoch\":$e,\"step\":$k,\"comm_s\":$k,\"calls_s\":$((10 * k)),\"calls_proper_s\":0.$k}"
  done
  echo '{"type":"summary","comm_per_step_s":9}'; } > "$tmp/log"
got=$(step_quartiles "$tmp/log" comm_s)
[ "$got" = "4 2 6" ] || fail "comm_s: '$got', want '4 2 6' (epoch 1 left out)"
got=$(step_quartiles "$tmp/log" calls_s)
[ "$got" = "40 20 60" ] || fail "calls_s: '$got', want '40 20 60'"
got=$(step_quartiles "$tmp/log" calls_proper_s)
[ "$got" = "0.4 0.2 0.6" ] || fail "calls_proper_s: '$got', want '0.4 0.2 0.6'"
got=$(step_quartiles "$tmp/log" wait_s)
[ "$got" = "NaN NaN NaN" ] || fail "a field no record has: '$got', want 'NaN NaN NaN'"
[ "$fails" = 0 ] && echo "trainer_path: all checks passed"
[ "$fails" = 0 ]
