#!/usr/bin/env bash
# grade.sh COLLGRADE SRC CHEAT CODES REGEX... — lab 07 graded on the cheat
# tests/labs/sharding/CHEAT.c (README.md: put in front of the reference
# solution when it defines cheat_rs_run or cheat_ag_run), through
# tests/labs/grade.sh (exit code one of CODES, every REGEX in the report).
set -eu
G=$1 SRC=$2 C=$SRC/tests/labs/sharding/$3.c; shift 3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if grep -qE '^static int cheat_(rs|ag)_run\(' "$C"; then
  cp "$SRC/labs/07-sharding/solution/my_ring.c" "$T/sol.c"
  for k in rs ag; do   # the descriptor of each half the cheat wraps runs the cheat
    grep -q "^static int cheat_${k}_run(" "$C" || continue
    sed -i "s/^    \.run = my_${k}_run,\$/    .run = cheat_${k}_run,/" "$T/sol.c"
    grep -q "^    \.run = cheat_${k}_run,\$" "$T/sol.c" ||
      { echo "grade.sh: the reference solution changed: no '.run = my_${k}_run,' to replace" >&2; exit 1; }
  done
  cat "$C" "$T/sol.c" > "$T/my_ring.c"
else
  cp "$C" "$T/my_ring.c"
fi
set +e
"$SRC/tests/labs/grade.sh" "$G" "$SRC/labs/07-sharding" "$T/my_ring.c" "$@"
