#!/usr/bin/env bash
# graph.sh COLLDRAW — graph.svg draws the shape of an algorithm's first sending step from its
# recorded messages: the binary tree at p = 7 as one tree (7 nodes, 6 arrows, root 0 ringed),
# the double binary tree at p = 4 as two trees with different roots (the complementary trees),
# and the ring as a circle (4 nodes, 4 arrows, no root). Fails on a tree drawn as anything else.
# --view 0: one-shot from rank 0's view, its frames draw only the loads into rank 0 (frames.txt all).
set -u
D=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
draw() { local out=$1; shift; "$D" --out "$dir/$out" "$@" > "$dir/$out.log" 2>&1 || { cat "$dir/$out.log"; fail "colldraw $*"; }; }
draw t7 --algo tree --np 7 --count 7
draw t2 --algo tree2 --np 4 --count 8
draw r4 --algo ring --np 4 --count 8
count() { grep -o "$1" "$2" | wc -l; }
g=$dir/t7/graph.svg
grep -q 'the tree its messages make' "$g" || fail "tree p = 7: not drawn as a tree"
[ "$(count '<circle[^>]*fill="#' "$g")" = 7 ] && [ "$(count 'marker-end="url(#ghead)"' "$g")" = 6 ] || fail "tree p = 7: not 7 nodes and 6 arrows"
[ "$(count 'stroke="#c00000" stroke-width="3"' "$g")" = 1 ] && grep -q 'root 0 (ringed)' "$g" || fail "tree p = 7: not one root, rank 0"
g=$dir/t2/graph.svg
grep -q 'the two trees its messages make' "$g" || fail "tree2 p = 4: not two trees"
roots=$(grep -o 'root [0-9]* (ringed)' "$g" | awk '{ print $2 }' | sort -u | tr '\n' ' ')
[ "$roots" = "0 3 " ] || fail "tree2 p = 4: roots '$roots', not the complementary 0 and 3"
[ "$(count 'marker-end="url(#ghead)"' "$g")" = 6 ] || fail "tree2 p = 4: not 3 arrows per tree"
g=$dir/r4/graph.svg
grep -q 'the ranks as a circle' "$g" && [ "$(count 'marker-end="url(#ghead)"' "$g")" = 4 ] || fail "ring p = 4: not a circle of 4 messages"
! grep -q 'ringed' "$g" || fail "ring p = 4: a root marked"
draw os --algo oneshot --np 4 --count 8 --view 0
f=$dir/os/frame-02.svg
grep -q "rank 0's view" "$f" && grep -q '1,2,3→0 load' "$f" || fail "oneshot --view 0: no loads into rank 0 drawn"
! grep -Eq '→[123] load' "$f" || fail "oneshot --view 0: a load into another rank drawn"
[ "$(grep -c ' load ' "$dir/os/frames.txt")" = 12 ] || fail "oneshot --view 0: frames.txt does not keep every load"
out=$("$D" --algo oneshot --np 4 --view 4 --out "$dir/bad" 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q 'no such rank' || fail "--view 4 at p = 4: exit $rc: $out"
echo PASS
