#!/usr/bin/env bash
# student_kit.sh SRC BUILD — `make student-kit` gives a kit a student can
# finish a lab in, and that does not give the answers away:
#   - the kit and its tarball are made; an existing folder is never overwritten;
#   - no reference solution, no instructor notes, no algorithm source code
#     (the built-in algorithms are in lib/libcollkit.a; docs/ has their slides);
#   - the skeletons are the students' files; the untouched skeleton grades low;
#   - the handouts' paths (build/bin, build/labs/NN-*/lab) work in the kit;
#   - lab 01 solved inside the kit (the reference solution copied in, as a
#     student's file would be) builds and passes the handout's check command
#     (its grading, and lab 04's, run in labs.kit_cleanroot);
#   - lab 06 (the crash harness) grades a save in the kit.
set -u
SRC=$1 B=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
K=$dir/kit
"$SRC/scripts/student-kit.sh" "$B" "$K" > "$dir/make.log" 2>&1 && ok || { bad "student-kit.sh failed"; cat "$dir/make.log"; }
[ -s "$K.tar.gz" ] && tar -tzf "$K.tar.gz" | grep -q "kit/labs/01-ring/my_ring.c" && ok || bad "no tarball, or it lacks the lab 01 file"
"$SRC/scripts/student-kit.sh" "$B" "$K" > "$dir/again.log" 2>&1; rc=$?
[ $rc -ne 0 ] && grep -q "already exists" "$dir/again.log" && ok || bad "an existing kit folder was not refused"
[ -z "$(find "$K" -path '*solution*' -o -path '*instructor*')" ] && ok || bad "solutions or instructor notes in the kit"
leaked=$(grep -rlE "static int (ring|rp|naive|tree|tree2|rd|rab|oneshot|twoshot)_run|ck_trees_allreduce|ring_schedule_bytes|memory_order_acquire\) < w->k" "$K" \
         --include='*.c' --include='*.h' --include='*.md' 2>/dev/null)
[ -z "$leaked" ] && ok || bad "algorithm code in the kit: $leaked"
[ -f "$K/docs/algorithms/ring.md" ] && grep -q "reduce-scatter" "$K/docs/algorithms/ring.md" && ok || bad "no algorithm docs"
# the pictures: every registry's algorithms, the halves lab 07 builds on among them
for f in ring-p4 ring-p6 reduce_scatter-ring-p4 reduce_scatter-halving-p4 allgather-ring-p4 allgather-rd-p4; do
  grep -q 'id="frame-1"' "$K/docs/algorithms/$f.html" 2>/dev/null && ok || bad "no drawn page docs/algorithms/$f.html"
done
grep -q "one reduce-scatter of" "$K/docs/algorithms/reduce_scatter-ring-p4.html" && ok || bad "the reduce-scatter page does not say what it draws"
cmp -s "$SRC/labs/01-ring/skeleton/my_ring.c" "$K/labs/01-ring/my_ring.c" && ok || bad "lab 01's file is not the skeleton"
(cd "$K" && bin/collgrade 01 --np-max 3 > "$dir/skel.txt" 2>&1); rc=$?
[ $rc -eq 3 ] && grep -q "own input unchanged" "$dir/skel.txt" && grep -q "PARTIAL: rank counts above --np-max 3" "$dir/skel.txt" && ok || { bad "skeleton in the kit (rc $rc)"; cat "$dir/skel.txt"; }
# The handouts' paths work in the kit as written: build/bin/..., build/labs/NN-*/lab.
[ -x "$K/build/bin/ckrun" ] && [ -x "$K/build/labs/01-ring/lab" ] && ok || bad "build/bin or build/labs/01-ring/lab missing in the kit"
cp "$SRC/labs/01-ring/solution/my_ring.c" "$K/labs/01-ring/my_ring.c"
(cd "$K" && build/bin/collkit-cc labs/01-ring/my_ring.c -o build/labs/01-ring/lab > "$dir/cc.txt" 2>&1 &&
  build/bin/ckrun -np 2 build/labs/01-ring/lab check --algo my_ring --quick --dtype f32 > "$dir/chk.txt" 2>&1) && ok \
  || { bad "the handout's rebuild and check commands in the kit"; cat "$dir/cc.txt" "$dir/chk.txt"; }
# Lab 04 in the kit: its tools are there and its file is the placeholder for
# the student's lab 01 ring. (Lab 01 solved and lab 04's train part are graded
# in the kit by labs.kit_cleanroot, where nothing of this build is reachable.)
[ -x "$K/bin/ckptdiff" ] && [ -x "$K/bin/tagsynth" ] && [ -f "$K/docs/trainer.md" ] && ok || bad "lab 04's tools or docs/trainer.md missing"
cmp -s "$SRC/labs/04-ddp/skeleton/my_ring.c" "$K/labs/04-ddp/my_ring.c" && ok || bad "lab 04's file is not its placeholder"
# Lab 06 in the kit: the crash harness is built into the kit's programs
# (plugin/save.c), the student's file is the skeleton, and the reference
# save copied in gets full marks.
cmp -s "$SRC/labs/06-faults/skeleton/my_save.c" "$K/labs/06-faults/my_save.c" && [ -f "$K/plugin/save.c" ] && ok \
  || bad "lab 06's file is not the skeleton, or the kit lacks plugin/save.c"
cp "$SRC/labs/06-faults/solution/my_save.c" "$K/labs/06-faults/my_save.c"
(cd "$K" && make lab06 > "$dir/l6.txt" 2>&1)
grep -Eq "TOTAL +100.0 / 100" "$dir/l6.txt" && ok || { bad "lab 06 solved in the kit"; cat "$dir/l6.txt"; }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
