#!/bin/bash
# check_verified.sh COLLVERIFY NP MPIRUN [MPIRUN FLAGS...] -- COLLCHECK ARGS...
# collcheck ARGS at NP ranks, writing its results file, then collverify on
# that file with the same ARGS: the run must pass, and so must the verdict
# computed outside it (every record of every call recomputed).
set -u
V=$1 NP=$2; shift 2
launcher=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do launcher+=("$1"); shift; done
shift
C=$1; shift
f=$(mktemp)
trap 'rm -f "$f"' EXIT
"${launcher[@]}" -np "$NP" "$C" "$@" --results "$f" || { echo "FAIL: collcheck"; exit 1; }
"$V" --np "$NP" --results "$f" "$@" > "$f.v" 2>&1; rc=$?
tail -n 1 "$f.v"
grep -E '^[0-9]+ passed, 0 failed$' "$f.v" > /dev/null && [ $rc = 0 ] || { cat "$f.v"; rm -f "$f.v"; echo "FAIL: collverify"; exit 1; }
rm -f "$f.v"
