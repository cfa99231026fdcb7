#!/usr/bin/env bash
# args.sh COLLDRAW — bad options end with exit 2 and one line that names the problem,
# before any MPI starts (no launcher needed); --help and --algo list exit 0; --np P
# without a launcher starts colldraw again under ckrun.
set -u
D=$1
fail() { echo "FAIL: $*"; exit 1; }
expect() {   # expect STATUS REGEX ARGS...
  local want=$1 re=$2; shift 2
  out=$("$D" "$@" 2>&1); rc=$?
  [ "$rc" = "$want" ] || fail "colldraw $*: exit $rc, want $want: $out"
  echo "$out" | grep -Eq -- "$re" || fail "colldraw $*: no '$re' in: $out"
  echo "ok: colldraw $* -> $rc"
}
expect 0 "usage: .*--algo NAME" --help
expect 0 "ring" --algo list
expect 2 "--algo NAME is needed" --count 4
expect 2 "unknown algorithm 'nosuch'" --algo nosuch
expect 0 "halving" --coll reduce_scatter --algo list
expect 2 "bad --coll 'scan'" --coll scan --algo ring
expect 2 "unknown algorithm 'halving'.*allgather registry" --coll allgather --algo halving
expect 2 "library's own collective" --algo mpi
expect 2 "--np '0'" --algo ring --np 0
expect 2 "--np '33'" --algo ring --np 33
expect 2 "--count '-1'" --algo ring --count -1
expect 2 "--count '513'" --algo ring --count 513
expect 2 "--inplace '2'" --algo ring --inplace 2
expect 2 "bad --transport 'tcp'" --algo ring --transport tcp
expect 2 "unknown option '--bogus'" --algo ring --bogus 1
expect 2 "--out needs a value" --algo ring --out
# an option of the other kind of drawing is refused, not ignored
expect 2 "--call picks a call of a --gantt trace" --algo ring --call 2
expect 2 "--gantt draws a trace; --np is for a run" --gantt /dev/null --np 4
# output that cannot be written: a file where the folder should be
tmp=$(mktemp)
tmpd=$(mktemp -d)
trap 'rm -f "$tmp"; rm -rf "$tmpd"' EXIT
expect 2 "is not a folder|cannot create" --algo ring --out "$tmp"
# a folder holding a file colldraw did not write is refused, and the file kept
mkdir "$tmpd/mine" && echo "my notes" > "$tmpd/mine/notes.txt"
expect 2 "holds notes.txt, which colldraw did not write" --algo ring --out "$tmpd/mine"
expect 2 "holds notes.txt, which colldraw did not write" --gantt /dev/null --out "$tmpd/mine"
[ "$(cat "$tmpd/mine/notes.txt")" = "my notes" ] && [ "$(ls "$tmpd/mine")" = notes.txt ] || fail "a user's file was touched"
# the default folder is checked before the run under the name the run writes it (--coll in it)
mkdir "$tmpd/cwd" "$tmpd/cwd/colldraw-ring-p1" && echo "my notes" > "$tmpd/cwd/colldraw-ring-p1/notes.txt"
out=$(cd "$tmpd/cwd" && "$D" --coll reduce_scatter --algo ring --count 2 2>&1); rc=$?
[ $rc = 0 ] && [ -s "$tmpd/cwd/colldraw-reduce_scatter-ring-p1/frames.txt" ] ||
  fail "--coll reduce_scatter refused for another run's folder: exit $rc: $out"
echo "ok: the default folder checked is the one written"
# --np without a launcher: colldraw starts itself under the ckrun beside it
out=$("$D" --algo ring --np 3 --count 5 --out "$tmpd/r" < /dev/null 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q "ring at p = 3, 5 elements" && [ "$(grep -c '^frame ' "$tmpd/r/frames.txt")" = 5 ] ||
  fail "colldraw --np 3 (relaunched under ckrun): exit $rc: $out"
echo "ok: --np 3 relaunches under ckrun"
# an earlier drawing is refused untouched, and replaced with --overwrite (its extra frames gone)
before=$(cat "$tmpd/r/frames.txt")
expect 2 "holds an earlier drawing .*--overwrite" --algo naive --count 2 --out "$tmpd/r"
[ "$(cat "$tmpd/r/frames.txt")" = "$before" ] || fail "a refused run changed the earlier drawing"
expect 0 "naive at p = 1, 2 elements" --algo naive --count 2 --out "$tmpd/r" --overwrite
[ ! -e "$tmpd/r/frame-02.svg" ] && [ -e "$tmpd/r/frame-00.svg" ] || fail "--overwrite left the earlier drawing's frames"
mkdir "$tmpd/g" && echo '<svg/>' > "$tmpd/g/gantt.svg"
expect 2 "holds an earlier timeline" --gantt /dev/null --out "$tmpd/g"
# a trace that is no file: named at once, never read without end nor waited on
mkfifo "$tmpd/fifo"
expect 2 "cannot read $tmpd: a directory, not a file" --gantt "$tmpd" --out "$tmpd/g2"
expect 2 "cannot read /dev/zero: a device, not a file" --gantt /dev/zero --out "$tmpd/g2"
expect 2 "fifo is not a collbench or tagtrain trace" --gantt "$tmpd/fifo" --out "$tmpd/g2"
echo "PASS"
