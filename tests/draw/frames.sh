#!/usr/bin/env bash
# frames.sh COLLDRAW_LABS MPIRUN [FLAGS...] — the frames colldraw draws, as text (frames.txt):
#   1. lab 01's reference ring (my_ring) and the library ring at p = 4 give the same frames,
#      for even and uneven blocks, fewer elements than ranks, in and out of place;
#   2. the ring's frames are the ring: 2(p-1) steps, after reduce-scatter step s each rank's
#      block r-s-1 holds s+2 contributions, the result holds all four everywhere;
#   3. wrong_gather_ring (its all-gather receives into the wrong block) is right up to the
#      all-gather and wrong from its first step (frame 4), where the SVG outlines the block that
#      went wrong, and colldraw exits 1 saying so; only such a frame has the key to wrong cells;
#   4. recursive doubling's second round: its four arc labels do not overlap (labels.sh).
set -u
D=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {   # run OUT ARGS...: colldraw on 4 ranks into $dir/OUT
  local out=$1; shift; "${MPI[@]}" -np 4 "$D" --out "$dir/$out" "$@" > "$dir/$out.log" 2>&1; }
MPI=("$@")

for args in "--count 8" "--count 10" "--count 3" "--count 9 --inplace 0"; do
  tag=$(echo "$args" | tr -d ' -')
  run "lab-$tag" --algo my_ring $args || { cat "$dir/lab-$tag.log"; fail "my_ring $args: exit $?"; }
  run "lib-$tag" --algo ring $args || { cat "$dir/lib-$tag.log"; fail "ring $args: exit $?"; }
  cmp -s "$dir/lab-$tag/frames.txt" "$dir/lib-$tag/frames.txt" ||
    { diff "$dir/lab-$tag/frames.txt" "$dir/lib-$tag/frames.txt"; fail "my_ring and ring draw different frames ($args)"; }
  echo "ok: my_ring and ring draw the same frames ($args)"
done

t=$dir/lib-count8/frames.txt
[ "$(grep -c '^frame ' "$t")" = 7 ] || fail "ring at p = 4: want 7 frames (input + 6 steps), got $(grep -c '^frame ' "$t")"
ls "$dir/lib-count8"/frame-0{0..6}.svg > /dev/null && [ -s "$dir/lib-count8/index.html" ] || fail "missing SVG frames or page"
[ ! -e "$dir/lib-count8/frame-07.svg" ] || fail "a frame too many"
# after reduce-scatter step 0 rank 1 holds ranks 0 and 1 (mask 3) in block 0 (elements 0-1)
awk '/^frame 1 /{f=1} f && /rank 1:/{print; exit}' "$t" | grep -q "rank 1: 3 3 2 2 2 2 2 2" ||
  fail "frame 1, rank 1 is not 'block 0 = ranks 0+1': $(awk '/^frame 1 /{f=1} f && /rank 1:/{print; exit}' "$t")"
# the last frame: every element of every rank holds all four (mask f)
[ "$(awk '/^frame 6 /{f=1; next} f && /rank/' "$t" | grep -c 'rank [0-3]: f f f f f f f f$')" = 4 ] ||
  fail "the result frame is not complete everywhere"
grep -q "send 3 -> 0 16 B block 3" "$t" || fail "rank 3's step-0 message is not labelled 'block 3, 16 B'"
echo "ok: the ring's frames are the ring"

# the broken ring: exit 1, right through frame 3 (the last reduce-scatter step), wrong from frame 4 on
"${MPI[@]}" -np 4 "$D" --out "$dir/bad" --algo wrong_gather_ring --count 8 > "$dir/bad.log" 2>&1
rc=$?
cat "$dir/bad.log"
[ $rc = 1 ] || fail "wrong_gather_ring: want exit 1, got $rc"
grep -q "first went wrong in frame 4 (step 3, all-gather)" "$dir/bad.log" || fail "the first wrong step is not named"
b=$dir/bad/frames.txt
before=$(awk '/^frame 4 /{exit} /!/' "$b")
[ -z "$before" ] || fail "wrong elements before the all-gather: $before"
# at frame 4 rank 1 has received its left neighbour's finished block 1 into block 3 (elements 6-7):
# they hold all four ranks' contributions of elements 2 and 3 (marked f!<2, f!<3); the rest is as before
w=$(awk '/^frame 4 /{f=1; next} /^frame 5 /{exit} f && /rank 1:/' "$b")
[ "$w" = "  rank 1: 3 3 2 2 f f f!<2 f!<3" ] || fail "frame 4: rank 1 is not drawn with block 3 holding elements 2-3: $w"
grep -q 'class="went-wrong"' "$dir/bad/frame-04.svg" || fail "frame-04.svg outlines no cell as gone wrong"
! grep -q 'class="went-wrong"' "$dir/bad/frame-03.svg" || fail "frame-03.svg outlines a cell as gone wrong"
grep -q "holds element [0-9]*'s contributions" "$dir/bad/frame-04.svg" || fail "frame-04.svg does not say what went wrong"
# the key to the hatching only where something is wrong
grep -q 'class="wrong-key"' "$dir/bad/frame-04.svg" || fail "frame-04.svg has no key to its wrong cells"
! grep -q 'class="wrong-key"' "$dir/bad/frame-03.svg" "$dir/lib-count8/frame-06.svg" || fail "a frame with nothing wrong has a key to wrong cells"
echo "ok: the wrong all-gather block is drawn wrong from step 3 on"

# recursive doubling at p = 4, round 2: four arcs peak at one height (0->2, 2->0, 1->3, 3->1);
# their labels stand apart (two lines each), right of every arc
run rd --algo rd --count 4 || { cat "$dir/rd.log"; fail "rd: exit $?"; }
"$(dirname "$0")/labels.sh" "$dir/rd/frame-02.svg" 4 || fail "rd frame-02.svg: labels overlap"
echo "ok: the labels of recursive doubling's second round stand apart"
echo "PASS"
