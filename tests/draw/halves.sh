#!/usr/bin/env bash
# halves.sh COLLDRAW_LAB07 MPIRUN [FLAGS...] — reduce-scatter and all-gather drawn (--coll):
#   1. lab 07's reference halves (my_ring) and the library's ring halves at p = 4 give the same
#      frames, in place (uneven blocks) and out of place (fewer elements than ranks);
#   2. the frames are the two halves of the ring: after reduce-scatter step 2 rank r's block r holds
#      all four ranks and the rest is washed out (undefined); the all-gather moves each block one rank
#      per step until every rank holds every block, each its owner's alone;
#   3. each half with a wrong step term in one index (wrong_ring) is right in frames 0-1 and wrong
#      from step 1 (frame 2), where the SVG outlines the block that went wrong; colldraw exits 1
#      naming that step.
set -u
D=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
MPI=("$@")
run() {   # run OUT ARGS...: colldraw on 4 ranks into $dir/OUT
  local out=$1; shift; "${MPI[@]}" -np 4 "$D" --out "$dir/$out" "$@" > "$dir/$out.log" 2>&1; }
frame() { awk -v f="$2" '$1 == "frame" { on = $2 == f; next } on && /rank/' "$dir/$1/frames.txt"; }

for coll in reduce_scatter allgather; do
  run "lib-$coll-count8" --coll $coll --algo ring --count 8 || { cat "$dir/lib-$coll-count8.log"; fail "ring $coll: exit $?"; }
  for args in "--count 10" "--count 3 --inplace 0"; do
    tag=$coll-$(echo "$args" | tr -d ' -')
    run "lab-$tag" --coll $coll --algo my_ring $args || { cat "$dir/lab-$tag.log"; fail "my_ring $coll $args: exit $?"; }
    run "lib-$tag" --coll $coll --algo ring $args || { cat "$dir/lib-$tag.log"; fail "ring $coll $args: exit $?"; }
    cmp -s "$dir/lab-$tag/frames.txt" "$dir/lib-$tag/frames.txt" ||
      { diff "$dir/lab-$tag/frames.txt" "$dir/lib-$tag/frames.txt"; fail "my_ring and ring draw different $coll frames ($args)"; }
    echo "ok: my_ring and ring draw the same $coll frames ($args)"
  done
done

rs=lib-reduce_scatter-count8 ag=lib-allgather-count8
[ "$(grep -c '^frame ' "$dir/$rs/frames.txt")" = 4 ] && [ "$(grep -c '^frame ' "$dir/$ag/frames.txt")" = 4 ] ||
  fail "ring halves at p = 4: want 4 frames each (input + 3 steps)"
head -1 "$dir/$rs/frames.txt" | grep -q "reduce-scatter$" || fail "frames.txt does not name the reduce-scatter"
[ "$(frame $rs 3 | sed -n 2p)" = "  rank 1: 2~ 2~ f f b~ b~ 3~ 3~" ] ||
  fail "reduce-scatter result, rank 1: want block 1 complete, the rest washed out: $(frame $rs 3 | sed -n 2p)"
[ "$(frame $rs 3 | grep -c ' f f')" = 4 ] || fail "not every rank's own block complete"
[ "$(frame $ag 0 | sed -n 3p)" = "  rank 2: 0 0 0 0 4 4 0 0" ] || fail "all-gather input, rank 2: $(frame $ag 0 | sed -n 3p)"
[ "$(frame $ag 1 | sed -n 2p)" = "  rank 1: 1 1 2 2 0 0 0 0" ] || fail "all-gather step 0, rank 1: $(frame $ag 1 | sed -n 2p)"
[ "$(frame $ag 3 | grep -c 'rank [0-3]: 1 1 2 2 4 4 8 8$')" = 4 ] || fail "the all-gather result is not every block everywhere"
grep -q 'class="spare"' "$dir/$rs/frame-03.svg" && ! grep -q 'class="spare"' "$dir/$rs/frame-02.svg" ||
  fail "the reduce-scatter's undefined blocks are washed out in the result frame only"
grep -q "send 3 -> 0 16 B block 2" "$dir/$rs/frames.txt" || fail "rank 3's step-0 message is not labelled 'block 2, 16 B'"
echo "ok: the frames are the ring's two halves"

for coll in reduce_scatter allgather; do
  "${MPI[@]}" -np 4 "$D" --out "$dir/bad-$coll" --coll $coll --algo wrong_ring --count 8 > "$dir/bad-$coll.log" 2>&1
  rc=$?
  cat "$dir/bad-$coll.log"
  [ $rc = 1 ] || fail "wrong_ring $coll: want exit 1, got $rc"
  phase=$([ $coll = allgather ] && echo all-gather || echo reduce-scatter)
  grep -q "first went wrong in frame 2 (step 1, $phase)" "$dir/bad-$coll.log" || fail "$coll: the first wrong step is not named"
  before=$(awk '/^frame 2 /{exit} /!/' "$dir/bad-$coll/frames.txt")
  [ -z "$before" ] || fail "$coll: wrong elements before step 1: $before"
  grep -q 'class="went-wrong"' "$dir/bad-$coll/frame-02.svg" || fail "$coll: frame-02.svg outlines no cell as gone wrong"
  ! grep -q 'class="went-wrong"' "$dir/bad-$coll/frame-01.svg" || fail "$coll: frame-01.svg outlines a cell as gone wrong"
done
# reduce-scatter: at step 1 rank 0 receives rank 3's input of block 2 (elements 4-5) as block 1's
# partial sum and adds its own input of block 1 (elements 2-3): rank 0's element i + rank 3's
# element i+2 is, in the checker's encoding, ranks 0 and 3 of element i+1
[ "$(frame bad-reduce_scatter 2 | sed -n 1p)" = "  rank 0: 1 1 9!<3 9!<4 9 9 1 1" ] ||
  fail "reduce-scatter frame 2, rank 0: $(frame bad-reduce_scatter 2 | sed -n 1p)"
grep -q "holds element 3's contributions (block 1; ranks 0,3)" "$dir/bad-reduce_scatter/frame-02.svg" ||
  fail "frame-02.svg does not say what went wrong"
# all-gather: at step 1 rank 1 receives block 3 (elements 6-7, rank 3's) into block 2
[ "$(frame bad-allgather 2 | sed -n 2p)" = "  rank 1: 1 1 2 2 8!<6 8!<7 0 0" ] ||
  fail "all-gather frame 2, rank 1: $(frame bad-allgather 2 | sed -n 2p)"
grep -q "holds element 6's contributions (block 3" "$dir/bad-allgather/frame-02.svg" || fail "frame-02.svg does not say what went wrong"
echo "ok: each broken half is drawn wrong from step 1 on"
echo "PASS"
