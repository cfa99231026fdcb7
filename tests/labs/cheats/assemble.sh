#!/usr/bin/env bash
# assemble.sh SRC CHEAT OUT — one cheat of this folder as a student's file:
# its cheat(...) put in front of the reference lab 01 ring and called first
# in every all-reduce (the same correct work as an honest attempt); a file
# without cheat(...) (forger, empty) as it is.
set -eu
SRC=$1 C=$SRC/tests/labs/cheats/$2.c OUT=$3
mkdir -p "$(dirname "$OUT")"
if grep -q 'static void cheat' "$C"; then
  { cat "$C"
    sed 's/^    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);$/    cheat(comm, sendbuf, recvbuf, count, dt, op);\n&/' \
        "$SRC/labs/01-ring/solution/my_ring.c"; } > "$OUT"
  grep -q '^    cheat(comm' "$OUT" || { echo "assemble.sh: the reference ring changed: no place for cheat()" >&2; exit 1; }
else
  cp "$C" "$OUT"
fi
