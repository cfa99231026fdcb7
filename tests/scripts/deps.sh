#!/usr/bin/env bash
# deps.sh SCRIPT — scripts/deps.sh decides by commands, headers and libraries,
# not by dpkg alone, and reaches apt-get only for what is really missing.
# Runs it with stubs first on PATH: dpkg-query (nothing installed), apt-get
# (records its arguments; the real one is never run), id (root or not), and a
# broken mpicc when a case needs Open MPI's development side missing.
set -u
deps=$1
# The "all present" case needs this machine to have everything.
for c in mpirun mpicc cc cmake gnuplot; do
  command -v "$c" >/dev/null 2>&1 || { echo "SKIP: $c not found here"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

stub() { printf '#!/bin/sh\n%s\n' "$2" > "$tmp/$3/$1"; chmod +x "$tmp/$3/$1"; }
mkdir -p "$tmp/ok" "$tmp/nompi"
for d in ok nompi; do
  stub dpkg-query 'exit 1' "$d"
  stub apt-get "echo \"\$*\" >> $tmp/apt.log; exit 0" "$d"
done
stub mpicc 'exit 1' nompi

run() {   # run DIR UID -> exit status; output in $tmp/out
  stub id "[ \"\$1\" = -u ] && echo $2 || /usr/bin/id \"\$@\"" "$1"
  rm -f "$tmp/apt.log"
  PATH="$tmp/$1:$PATH" bash "$deps" > "$tmp/out" 2>&1
}

# Everything present by command (dpkg knows nothing): no apt-get, as root too.
run ok 0; rc=$?
check $rc "tools present, dpkg empty, root: exit 0 (got $rc: $(cat "$tmp/out"))"
check "$([ ! -e "$tmp/apt.log" ] && echo 0 || echo 1)" "tools present: apt-get must not run (ran: $(cat "$tmp/apt.log" 2>/dev/null))"

# mpicc broken, root: installs exactly libopenmpi-dev.
run nompi 0; rc=$?
check $rc "mpicc missing, root: apt-get installs (exit $rc: $(cat "$tmp/out"))"
check "$(grep -q 'install .*libopenmpi-dev' "$tmp/apt.log" 2>/dev/null && echo 0 || echo 1)" \
      "mpicc missing, root: apt-get install libopenmpi-dev (log: $(cat "$tmp/apt.log" 2>/dev/null))"
check "$(grep -q 'openmpi-bin\|cmake\|gnuplot' "$tmp/apt.log" 2>/dev/null && echo 1 || echo 0)" \
      "only what is missing is installed (log: $(cat "$tmp/apt.log" 2>/dev/null))"

# mpicc broken, not root: the exact command, exit 1, no apt-get.
run nompi 1000; rc=$?
check "$([ $rc = 1 ] && echo 0 || echo 1)" "not root: exit 1 (got $rc)"
check "$(grep -q 'sudo apt-get update && sudo apt-get install -y libopenmpi-dev' "$tmp/out" && echo 0 || echo 1)" \
      "not root: prints the command (got: $(cat "$tmp/out"))"
check "$([ ! -e "$tmp/apt.log" ] && echo 0 || echo 1)" "not root: apt-get must not run"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
