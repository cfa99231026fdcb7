#!/usr/bin/env bash
# shm.sh COLLDRAW MPIRUN [FLAGS...] — the symmetric algorithms drawn with their shared memory:
#   twoshot at p = 4 shows each rank's input copy and staging buffer as rows of their own; after
#   the reduce-scatter step rank r's staging buffer holds block r from all four ranks, loaded from
#   every peer's input copy (no message); the all-gather loads every other block from its owner's
#   staging buffer; oneshot shows only the input copy. Also fewer elements than ranks (an empty
#   slice: nothing staged) and out of place.
set -u
D=$1; shift
MPI=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {   # run OUT ARGS...: colldraw on 4 ranks into $dir/OUT, which must be drawn right
  local out=$1; shift
  "${MPI[@]}" -np 4 "$D" --out "$dir/$out" "$@" > "$dir/$out.log" 2>&1 || { cat "$dir/$out.log"; fail "$*: exit $?"; }
}
row() { awk -v f="^frame $2 " -v r="$3" '$0 ~ f {on=1; next} /^frame /{on=0} on && index($0, r) == 1' "$dir/$1/frames.txt"; }

run ts --algo twoshot --np 4 --count 8
t=$dir/ts/frames.txt
[ "$(grep -c '^frame ' "$t")" = 4 ] || fail "twoshot: want 4 frames (input, copy-in, reduce-scatter, all-gather), got $(grep -c '^frame ' "$t")"
[ "$(row ts 1 '  rank 2 input copy:')" = "  rank 2 input copy: 4 4 4 4 4 4 4 4" ] || fail "frame 1: rank 2's input copy: $(row ts 1 '  rank 2 input copy:')"
[ "$(row ts 1 '  rank 2 staging:')" = "  rank 2 staging: 0 0 0 0 0 0 0 0" ] || fail "frame 1: rank 2 stages something already"
for r in 0 1 2 3; do
  want=$(awk -v r=$r 'BEGIN { printf "  rank %d staging:", r; for (i = 0; i < 8; i++) printf " %s", int(i / 2) == r ? "f" : "0"; print "" }')
  [ "$(row ts 2 "  rank $r staging:")" = "$want" ] || fail "frame 2: rank $r's staging is not its block from all ranks: $(row ts 2 "  rank $r staging:")"
  [ "$(row ts 2 "  rank $r:")" = "$(row ts 1 "  rank $r:")" ] || fail "frame 2: rank $r's buffer changed in the reduce-scatter"
done
[ "$(row ts 2 '  load' | wc -l)" = 12 ] || fail "frame 2: want 12 loads (every rank from 3 peers)"
row ts 2 '  load 3 -> 1 16 B block 1' | grep -q . || fail "frame 2: rank 1 does not load block 1 from rank 3"
! grep -q '  send ' "$t" || fail "twoshot drawn with messages"
[ "$(row ts 3 '  rank' | grep -c ': f f f f f f f f$')" = 4 ] || fail "frame 3: the result is not complete everywhere"
row ts 3 '  load 2 -> 0 16 B block 2' | grep -q . || fail "frame 3: rank 0 does not load block 2 from rank 2's staging"
grep -q 'input copy</text>' "$dir/ts/frame-02.svg" && grep -q 'staging</text>' "$dir/ts/frame-02.svg" ||
  fail "frame-02.svg does not label the shared rows"
for k in 02 03; do "$(dirname "$0")/labels.sh" "$dir/ts/frame-$k.svg" 4 || fail "twoshot frame-$k.svg: labels overlap"; done
echo "ok: twoshot drawn with its input copies and staging buffers"

run os --algo oneshot --np 4 --count 8
! grep -q staging "$dir/os/frames.txt" || fail "oneshot drawn with a staging buffer"
[ "$(row os 2 '  load' | wc -l)" = 12 ] && row os 2 '  load 0 -> 3 64 B all' | grep -q . || fail "oneshot: every rank loads all of every peer's input copy"
echo "ok: oneshot drawn with its input copies"

run ts3 --algo twoshot --np 4 --count 3
[ "$(row ts3 2 '  rank 3 staging:')" = "  rank 3 staging: 0 0 0" ] || fail "count 3: rank 3 stages something from an empty slice"
[ "$(row ts3 2 '  rank 1 staging:')" = "  rank 1 staging: 0 f 0" ] || fail "count 3: rank 1's staging: $(row ts3 2 '  rank 1 staging:')"
run tso --algo twoshot --np 4 --count 9 --inplace 0
[ "$(row tso 0 '  rank 0:')" = "  rank 0: 0 0 0 0 0 0 0 0 0" ] || fail "out of place: the result buffer does not start empty"
echo "ok: fewer elements than ranks, out of place"
echo "PASS"
