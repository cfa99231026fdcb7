#!/usr/bin/env bash
# deps.sh SCRIPT — scripts/deps.sh decides by commands, headers and libraries,
# not by dpkg alone, and reaches apt-get only for what is really missing.
# Runs it with stubs first on PATH: dpkg-query (nothing installed), apt-get
# (records its arguments; the real one is never run), id (root or not), and a
# broken mpicc when a case needs Open MPI's development side missing; for
# SimGrid (wanted, not required, unless COLLKIT_SIMGRID=require) a broken
# smpicc and an apt-cache that does or does not know libsimgrid-dev.
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
mkdir -p "$tmp/ok" "$tmp/nompi" "$tmp/nosg" "$tmp/nosg_unknown" "$tmp/nompi_nosg"
for d in ok nompi nosg nosg_unknown nompi_nosg; do
  stub dpkg-query 'exit 1' "$d"
  stub apt-get "echo \"\$*\" >> $tmp/apt.log; exit 0" "$d"
  stub apt-cache "echo '  Candidate: 3.32-2'" "$d"
done
stub mpicc 'exit 1' nompi
stub mpicc 'exit 1' nompi_nosg
for d in nosg nosg_unknown nompi_nosg; do stub smpicc 'exit 1' "$d"; stub smpirun 'exit 0' "$d"; done
stub apt-cache "echo '  Candidate: (none)'" nosg_unknown

run() {   # run DIR UID [COLLKIT_SIMGRID] -> exit status; output in $tmp/out
  stub id "[ \"\$1\" = -u ] && echo $2 || /usr/bin/id \"\$@\"" "$1"
  rm -f "$tmp/apt.log"
  PATH="$tmp/$1:$PATH" COLLKIT_SIMGRID=${3:-0} bash "$deps" > "$tmp/out" 2>&1
}
log() { cat "$tmp/apt.log" 2>/dev/null; }

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

# SimGrid wanted, root, the rest present, apt-cache knows it: installed alone, no update.
run nosg 0 want; rc=$?
check $rc "SimGrid missing, root: exit 0 (got $rc: $(cat "$tmp/out"))"
check "$(log | grep -q 'install .*libsimgrid-dev' && echo 0 || echo 1)" "SimGrid missing, root: apt-get install libsimgrid-dev (log: $(log))"
check "$(log | grep -q update && echo 1 || echo 0)" "SimGrid alone: no apt-get update (log: $(log))"
# ... and when the package lists do not know it: no apt-get at all, a note, exit 0.
run nosg_unknown 0 want; rc=$?
check $rc "SimGrid unknown to apt-cache: exit 0 (got $rc)"
check "$([ ! -e "$tmp/apt.log" ] && echo 0 || echo 1)" "SimGrid unknown to apt-cache: apt-get must not run (ran: $(log))"
check "$(grep -q 'simulated-cluster tests are skipped' "$tmp/out" && echo 0 || echo 1)" "SimGrid unknown: a note (got: $(cat "$tmp/out"))"
# Not root: a note, exit 0, no apt-get.
run nosg 1000 want; rc=$?
check $rc "SimGrid missing, not root: exit 0 (got $rc)"
check "$(grep -q 'apt-get install libsimgrid-dev' "$tmp/out" && echo 0 || echo 1)" "SimGrid missing, not root: says how (got: $(cat "$tmp/out"))"
check "$([ ! -e "$tmp/apt.log" ] && echo 0 || echo 1)" "SimGrid missing, not root: apt-get must not run"
# Required (make sim-bench), not root: the exact command, exit 1.
run nosg 1000 require; rc=$?
check "$([ $rc = 1 ] && echo 0 || echo 1)" "SimGrid required, not root: exit 1 (got $rc)"
check "$(grep -q 'sudo apt-get update && sudo apt-get install -y libsimgrid-dev' "$tmp/out" && echo 0 || echo 1)" \
      "SimGrid required, not root: prints the command (got: $(cat "$tmp/out"))"
# Wanted, root, with Open MPI missing too: one update, Open MPI, then SimGrid.
run nompi_nosg 0 want; rc=$?
check $rc "Open MPI and SimGrid missing, root: exit 0 (got $rc: $(cat "$tmp/out"))"
check "$(log | grep -q 'install .*libopenmpi-dev' && log | grep -q 'install .*libsimgrid-dev' && echo 0 || echo 1)" \
      "Open MPI and SimGrid missing, root: both installed (log: $(log))"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
