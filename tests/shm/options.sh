#!/usr/bin/env bash
# options.sh COLLCHECK COLLBENCH — --transport in both tools: the names, the
# clash with --device cuda, and --algo list naming the memory kinds.
set -u
C=$1 B=$2
. "$(dirname "$0")/../lib/expect.sh"
for tool in "$C" "$B"; do
  expect_run 2 "transport 'tcp'.*(mpi, shm or cuda-ipc)|bad --transport 'tcp' \(want mpi, shm or cuda-ipc\)" "$tool" --transport tcp
  expect_run 2 "--transport shm moves host buffers, not --device cuda" "$tool" --device cuda --transport shm
  expect_run 0 "^oneshot +shm(,cuda)? " "$tool" --algo list
  expect_run 0 "memory host: the mpi and shm" "$tool" --algo list
done
expect_run 2 "algorithm 'oneshot' runs on shm(,cuda)? buffers, not host" "$C" --algo oneshot
expect_run 2 "algorithm 'oneshot' runs on shm(,cuda)? buffers, not host" "$C" --transport mpi --algo oneshot
expect_run 0 "--transport mpi\|shm\|cuda-ipc" "$C" --help
expect_run 0 "--transport T" "$B" --help
expect_summary
