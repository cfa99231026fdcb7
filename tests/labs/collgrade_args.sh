#!/usr/bin/env bash
# collgrade_args.sh COLLGRADE — collgrade's own arguments, no MPI needed: the
# help is the whole comment block at the top of the script (its last line
# too, none of the code after it), and a time limit that is not a whole
# number of seconds >= 1 stops it with exit 2 and one message.
set -u
G=$1
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

out=$("$G" --help 2>&1); rc=$?
check '[ $rc = 2 ]' "--help: exit $rc, expected 2"
check 'grep -q "^collgrade — the autograder of the collkit labs" <<<"$out"' "--help: no first line"
check 'grep -q "^2 bad arguments or a lab that cannot be graded.$" <<<"$out"' "--help: the header's last line is missing"
check 'grep -q -- "--time-limit S (or COLLGRADE_TIME_LIMIT=S)" <<<"$out"' "--help: the time limit is not documented"
check '! grep -qE "^(set -u|HERE=|die\\(\\))" <<<"$out"' "--help prints code: $(tail -2 <<<"$out")"

for v in 0 00 -5 abc 1.5 9999999; do
  out=$("$G" 01 --time-limit "$v" 2>&1); rc=$?
  check '[ $rc = 2 ] && grep -q "time-limit.*'"'$v'"'" <<<"$out"' "--time-limit '$v': exit $rc: $out"
done
out=$(COLLGRADE_TIME_LIMIT=soon "$G" 01 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "COLLGRADE_TIME_LIMIT.*'"'soon'"'" <<<"$out"' "COLLGRADE_TIME_LIMIT=soon: exit $rc: $out"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
