#!/usr/bin/env bash
# options.sh COLLCHECK COLLBENCH — --transport in both tools: the names, the
# clash with --device cuda, and --algo list naming the memory kinds.
set -u
C=$1 B=$2
pass=0; fail=0
expect() {   # expect STATUS REGEX -- command...
  local want=$1 re=$2; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ $rc -eq "$want" ] && echo "$out" | grep -Eq -- "$re"; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: $* -> $rc (want $want, /$re/):"; echo "$out" | head -5; fi
}
for tool in "$C" "$B"; do
  expect 2 "transport 'tcp'.*(mpi, shm or cuda-ipc)|bad --transport 'tcp' \(want mpi, shm or cuda-ipc\)" -- "$tool" --transport tcp
  expect 2 "--transport shm moves host buffers, not --device cuda" -- "$tool" --device cuda --transport shm
  expect 0 "^oneshot +shm(,cuda)? " -- "$tool" --algo list
  expect 0 "memory host: the mpi and shm" -- "$tool" --algo list
done
expect 2 "algorithm 'oneshot' runs on shm(,cuda)? buffers, not host" -- "$C" --algo oneshot
expect 2 "algorithm 'oneshot' runs on shm(,cuda)? buffers, not host" -- "$C" --transport mpi --algo oneshot
expect 0 "--transport mpi\|shm\|cuda-ipc" -- "$C" --help
expect 0 "--transport T" -- "$B" --help
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
