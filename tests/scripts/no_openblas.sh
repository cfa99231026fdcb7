#!/usr/bin/env bash
# no_openblas.sh SRC DIR [WERROR] — a machine without OpenBLAS (a GPU node often
# has CUDA and MPI but no BLAS): `cmake` configures, says with a warning what it
# leaves out, and builds the library, collcheck and collbench; the trainer is
# not a target. OpenBLAS is hidden from the trainer's search
# (trainer/CMakeLists.txt): pkg-config off, cblas.h looked for in an empty folder.
# Configured twice in fresh folders under DIR: with CUDA as this machine has it
# (configure only: the GPU tests' guards), and without CUDA, built (seconds).
set -u
SRC=$1 DIR=$2 WERROR=${3:-OFF}
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

rm -rf "$DIR" && mkdir -p "$DIR/empty" || { echo "FAIL: cannot make $DIR"; exit 1; }
hide=(-DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON "-DOPENBLAS_INC=$DIR/empty" "-DCOLLKIT_WERROR=$WERROR")
warning="collkit: OpenBLAS not found: the trainer (tagtrain), the plug-in kit and"

# configure NAME ARGS...: a fresh build folder DIR/NAME, its output in DIR/NAME.log.
configure() {
  local name=$1; shift
  if cmake -S "$SRC" -B "$DIR/$name" "${hide[@]}" "$@" > "$DIR/$name.log" 2>&1; then ok
  else bad "cmake ($name) failed:"; cat "$DIR/$name.log"; return 1; fi
  grep -qF "$warning" "$DIR/$name.log" && ok || bad "cmake ($name) did not warn that OpenBLAS is missing"
  # No trainer test is registered where there is no trainer.
  local tests
  tests=$(cd "$DIR/$name" && ctest -N 2>&1)
  grep -Eq 'Test +#[0-9]+: (trainer|faults|labs|outoftree)\.' <<<"$tests" &&
    bad "($name) tests of the trainer or what links it registered without OpenBLAS" || ok
  grep -Eq 'Test +#[0-9]+: check\.' <<<"$tests" && ok || bad "($name) the checker's tests are not registered"
}

configure gpu
if configure host -DCOLLKIT_CUDA=OFF; then
  b=$DIR/host
  if cmake --build "$b" -j 2 --target collkit collcheck collbench > "$DIR/build.log" 2>&1; then ok
  else bad "building collkit, collcheck and collbench failed:"; tail -40 "$DIR/build.log"; fi
  for p in collcheck collbench; do
    [ -x "$b/bin/$p" ] && ok || bad "no $b/bin/$p"
  done
  cmake --build "$b" --target tagtrain > "$DIR/tagtrain.log" 2>&1 &&
    bad "tagtrain is a target without OpenBLAS" || ok
  [ ! -e "$b/bin/tagtrain" ] && ok || bad "$b/bin/tagtrain was built"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && rm -rf "$DIR"
[ $fail -eq 0 ]
