#!/usr/bin/env bash
# simrun.sh SIMRUN — sim/simrun's rank count: a whole number from 1 to its
# maximum, checked as text (00 once reached smpirun, 20 digits gave bash
# errors), refused with exit 2 and one line before smpirun is looked for, so
# this runs without SimGrid.
set -u
S=$1
pass=0; fail=0
for v in 0 00 000 -1 abc 2x 0x10 " 2" 1048577 99999999999999999999; do
  out=$("$S" -np "$v" /nonexistent/simrun-test-program 2>&1); rc=$?
  if [ $rc = 2 ] && [ "$out" = "simrun: -np '$v': the number of ranks must be a whole number from 1 to 1048576" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: -np '$v': exit $rc, output: $out"
  fi
done
out=$("$S" /nonexistent/simrun-test-program 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "^simrun: usage: simrun -np N" <<<"$out"; then pass=$((pass + 1))
else fail=$((fail + 1)); echo "FAIL: no -np: exit $rc, output: $out"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
