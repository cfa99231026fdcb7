#!/usr/bin/env bash
# bench_env.sh SOURCE_DIR — the settings `make bench` takes from the
# environment (BENCH_NP, BENCH_GPU_NP; TRAINER_NP, TRAINER_LOCAL_BATCH,
# TRAINER_EPOCHS for the trainer's part) are checked before anything runs or
# is written: a value that is not a whole number in range, or a rank count
# given twice, is one line and exit 2. The programs are stubs here (nothing is
# launched), so no MPI is needed.
set -u
src=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collkit-benchenv-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/build/bin"
for p in collbench tagtrain; do printf '#!/bin/sh\necho "stub $0 ran" >&2; exit 9\n' > "$tmp/build/bin/$p"; chmod +x "$tmp/build/bin/$p"; done
pass=0; fail=0
expect() {   # expect REGEX SCRIPT VAR=VALUE...: exit 2, one line matching REGEX, no folder written
  local re=$1 script=$2; shift 2
  local before after out rc
  before=$(ls "$src/bench-results" 2>/dev/null | wc -l)
  out=$(env "$@" bash "$src/scripts/$script" "$tmp/build" "$tmp/out" 2>&1); rc=$?
  after=$(ls "$src/bench-results" 2>/dev/null | wc -l)
  if [ $rc = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -Eq -- "$re" <<<"$out" && [ "$before" = "$after" ] &&
     [ ! -e "$tmp/out" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: $script $*: exit $rc, output: $out"
  fi
}
for v in "2 x" "0" "2 -4" "02" "2.5" "99999999999999999999" "5000"; do
  expect "^bench: BENCH_NP='$v': '[^']*' is (not a number of ranks|more than 4096 ranks)" bench.sh BENCH_NP="$v"
done
expect "^bench: BENCH_NP='2 4 2': 2 is given twice$" bench.sh BENCH_NP="2 4 2"
expect "^bench: BENCH_NP holds only white space" bench.sh BENCH_NP="  "
expect "^bench: BENCH_GPU_NP='1 two': 'two' is not a number of ranks" bench.sh BENCH_GPU_NP="1 two"
expect "^bench: BENCH must be quick, full or smoke \(got 'fast'\)" bench.sh BENCH=fast
for v in "2 1" "4 x" "0" "99999999999999999999"; do
  expect "^bench_trainer: TRAINER_NP \(one of '$v'\)='[^']*': want a whole number from 2 to 4096$" bench_trainer.sh TRAINER_NP="$v"
done
expect "^bench_trainer: TRAINER_NP='2 4 4': 4 is given twice$" bench_trainer.sh TRAINER_NP="2 4 4"
for v in 0 -1 abc 16x 099; do
  expect "^bench_trainer: TRAINER_LOCAL_BATCH='$v': want a whole number from 1 to 65536$" bench_trainer.sh TRAINER_LOCAL_BATCH="$v"
done
expect "^bench_trainer: TRAINER_EPOCHS='1e3': want a whole number from 1 to 10000$" bench_trainer.sh TRAINER_EPOCHS=1e3
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
