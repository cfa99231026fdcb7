#!/usr/bin/env bash
# kit_cleanroot.sh SRC BUILD — the student kit works as a student gets it:
# `make student-kit`'s tarball unpacked into a mount namespace in which the
# source tree, the build tree, the ../shared beside the source tree and the
# CUDA Toolkit (/usr/local/cuda*) are empty folders (a tmpfs over each), so
# nothing of this machine's builds can be reached. There:
#   - every tool in bin/ starts;
#   - lab 00's ping-pong (collbench --pingpong through ckrun) runs;
#   - lab 01's reference solution, as the student's file, gets full
#     correctness and integrity marks from `make lab01` (collgrade; the
#     performance part is measured: no timing threshold);
#   - lab 04's train part (tagtrain with that ring, against 1 rank; its
#     lab.conf line alone) passes;
#   - tagtrain trains on the kit's own copy of the data (where this machine
#     has the data to put in the kit);
#   - device memory is refused with a reason (no CUDA runtime), not a crash.
# Before that, outside: no file of the kit (`strings` of every binary, the
# text of every other file) names the source or the build tree.
# Exit 77 (CTest: skipped) where mount namespaces are not allowed (not root
# and no working bwrap).
set -u
if [ "${1:-}" = "--inside" ]; then
  # ---- inside the namespace: kit folder, then the folders that must be hidden
  K=$2; shift 2
  cd "$K" || exit 1
  pass=0; fail=0
  ok() { pass=$((pass + 1)); }
  bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
  for d in "$@"; do
    [ -z "$(ls -A "$d" 2>/dev/null)" ] && ok || bad "$d is visible in the clean root"
  done
  for t in collcheck collbench tagtrain tagpredict ckptdiff tagsynth collkit-cc; do
    bin/$t --help > out.txt 2>&1 && ! grep -q "error while loading" out.txt && ok || { bad "bin/$t does not start"; cat out.txt; }
  done
  build/bin/ckrun -np 2 build/bin/collbench --pingpong -b 8 -e 4K -f 8 > pp.txt 2>&1 && grep -qi "alpha" pp.txt && ok \
    || { bad "lab 00's ping-pong"; cat pp.txt; }
  build/bin/ckrun -np 1 bin/collcheck --device cuda --algo ring --count 3 --dtype f32 --op sum > dev.txt 2>&1; rc=$?
  { [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "cannot create a communicator for cuda buffers" dev.txt &&
    { [ ! -f lib/libcollkit_cuda.so ] || grep -q "CUDA support not available: " dev.txt; }; } && ok \
    || { bad "device memory without CUDA (rc $rc)"; cat dev.txt; }
  if [ -f datasets/madewithml/dataset.csv ]; then
    bin/tagtrain --epochs 1 --features 1024 --hidden 32 --quiet > tt.txt 2>&1 && ok || { bad "tagtrain on the kit's data"; cat tt.txt; }
  fi
  make lab01 > l1.txt 2>&1
  grep -Eq "correctness +60.0 / 60" l1.txt && grep -Eq "integrity +20.0 / 20" l1.txt &&
    grep -Eq "performance +[0-9.]+ / 20 +speed" l1.txt && ok || { bad "lab 01's reference solution"; cat l1.txt; }
  COLLGRADE_LABS=$K/../labs-train bin/collgrade 04 --np-max 2 > l4.txt 2>&1
  # --np-max 2: p = 3 is left out, and the grade says it is partial
  grep -Eq "equivalence +20.0 / 40 +my_ring in tagtrain: 2 of 4 runs equal the 1-rank run's; p = 3 dense, 3 bucketed not run \(--np-max 2\)" l4.txt &&
    grep -q "PARTIAL" l4.txt && ok \
    || { bad "lab 04's train part"; cat l4.txt; }
  echo "$pass passed, $fail failed (in the clean root)"
  [ $fail -eq 0 ]
  exit
fi

SRC=$(cd "$1" && pwd -P) B=$(cd "$2" && pwd -P)
hide=("$SRC" "$B")
[ -d "$SRC/../shared" ] && hide+=("$(cd "$SRC/../shared" && pwd -P)")
for c in /usr/local/cuda /usr/local/cuda-*; do [ -d "$c" ] && hide+=("$(cd "$c" && pwd -P)"); done
# A folder inside another one of the list disappears with it.
top=()
for d in "${hide[@]}"; do
  inner=0
  for e in "${hide[@]}"; do case "$d" in "$e"/*) inner=1 ;; esac; done
  [ $inner = 1 ] || top+=("$d")
done
if [ "$(id -u)" = 0 ] && unshare -m true 2> /dev/null; then how=unshare
elif command -v bwrap > /dev/null && bwrap --dev-bind / / --tmpfs /mnt true 2> /dev/null; then how=bwrap
else echo "SKIP: no mount namespaces here (not root, no working bwrap)"; exit 77; fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
case "$dir" in "$SRC"/*|"$B"/*) echo "FAIL: the temporary folder $dir lies inside a tree to hide"; exit 1 ;; esac
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
"$SRC/scripts/student-kit.sh" "$B" "$dir/made/kit" > "$dir/make.log" 2>&1 && ok || { bad "student-kit.sh failed"; cat "$dir/make.log"; exit 1; }
mkdir "$dir/home" && tar -xzf "$dir/made/kit.tar.gz" -C "$dir/home" && ok || { bad "the tarball does not unpack"; exit 1; }
K=$dir/home/kit
leaks=""
while IFS= read -r -d '' f; do
  if strings -a "$f" | grep -qF -e "$SRC" -e "$B"; then leaks="$leaks ${f#"$K"/}"; fi
done < <(find "$K" -type f -print0)
# A sanitizer build names its source files in its instrumentation (ASan's
# globals): such a build is for testing, never a kit to hand out.
san=$(sed -n 's/^COLLKIT_SANITIZE:STRING=//p' "$B/CMakeCache.txt" 2>/dev/null)
case "$(echo "${san:-OFF}" | tr A-Z a-z)" in off|0|no|false|"") ;; *) leaks="" ;; esac
[ -z "$leaks" ] && ok || bad "the kit names this machine's trees:$leaks"
# The data goes with the kit wherever this machine has it (the places
# student-kit.sh looks); without it the kit says so and leaves it out.
data=0
for d in "${COLLKIT_DATA:-}" "$SRC/datasets/madewithml" "$SRC/../shared/datasets/madewithml"; do
  [ -n "$d" ] && [ -f "$d/dataset.csv" ] && [ -f "$d/holdout.csv" ] && data=1
done
if [ $data = 1 ]; then
  [ -f "$K/datasets/madewithml/dataset.csv" ] && [ -f "$K/datasets/madewithml/LICENSE" ] &&
    [ -f "$K/datasets/madewithml/SOURCE.md" ] && ok || bad "the kit lacks the data, its LICENSE or SOURCE.md"
else
  [ ! -e "$K/datasets/madewithml" ] && grep -q "no Made With ML data" "$dir/make.log" && ok || bad "no data here, and the kit did not say so"
fi
# The student's files, put in before the source tree disappears.
cp "$SRC/labs/01-ring/solution/my_ring.c" "$K/labs/01-ring/my_ring.c"
# Lab 04's train part alone: its lab.conf without the other parts' lines.
mkdir -p "$dir/home/labs-train/04-ddp"
grep -v -E '^part +[a-z_]+ +[0-9]+ +[a-z]' "$K/labs/04-ddp/lab.conf" > "$dir/home/labs-train/04-ddp/lab.conf"
grep -E '^part +[a-z_]+ +[0-9]+ +train ' "$K/labs/04-ddp/lab.conf" >> "$dir/home/labs-train/04-ddp/lab.conf"
cp "$SRC/labs/01-ring/solution/my_ring.c" "$dir/home/labs-train/04-ddp/my_ring.c"
cp "$0" "$dir/inside.sh"
if [ $how = unshare ]; then
  mounts=""
  for d in "${top[@]}"; do mounts="$mounts mount -t tmpfs -o size=1m,mode=755 none '$d' &&"; done
  env -u COLLKIT_DATA unshare -m --propagation private \
    sh -c "$mounts exec bash '$dir/inside.sh' --inside '$K' $(printf "'%s' " "${hide[@]}")"
else
  args=(--dev-bind / /)
  for d in "${top[@]}"; do args+=(--tmpfs "$d"); done
  env -u COLLKIT_DATA bwrap "${args[@]}" bash "$dir/inside.sh" --inside "$K" "${hide[@]}"
fi
[ $? -eq 0 ] && ok || bad "the kit in the clean root (above)"
echo "$pass passed, $fail failed ($how)"
[ $fail -eq 0 ]
