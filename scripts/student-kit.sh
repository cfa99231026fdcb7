#!/usr/bin/env bash
# student-kit.sh BUILD_DIR OUT_DIR — the folder (and OUT_DIR.tar.gz) a course
# hands to its students: the handouts and skeletons, the tools (collcheck,
# collbench, tagtrain, tagpredict, ckptdiff, tagsynth, collgrade, collkit-cc,
# ckrun), and the library with
# the reference algorithms as compiled code only. Students compare their
# algorithm with the library's (--algo ring,my_ring), they cannot read it;
# what each algorithm does is in docs/algorithms/ (the slide at the top of
# each algorithm file, without the code). No reference solution and no
# instructor notes are included. OUT_DIR must not exist yet: a kit someone
# has been working in is never overwritten.
set -euo pipefail
B=$(cd "${1:?usage: student-kit.sh BUILD_DIR OUT_DIR}" && pwd)
OUT=${2:?usage: student-kit.sh BUILD_DIR OUT_DIR}
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ -e "$OUT" ]; then
  echo "student-kit: $OUT already exists; remove it or choose another folder (KIT=...)" >&2
  exit 2
fi
for f in bin/collcheck bin/collbench bin/tagtrain bin/tagpredict bin/ckptdiff bin/tagsynth bin/collkit-cc bin/collgrade \
         bin/ckrun collkit-targets.cmake; do
  [ -e "$B/$f" ] || { echo "student-kit: $B/$f is missing: build first (make)" >&2; exit 2; }
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
mkdir -p "$OUT"/{bin,lib,include,cmake,plugin,labs,docs/algorithms}

# Tools and libraries (compiled; the algorithms' code is inside libcollkit.a).
# (ckptdiff and tagsynth: lab 04's equivalence part compares checkpoints of runs on synthetic data.)
cp "$B"/bin/{collcheck,collbench,tagtrain,tagpredict,ckptdiff,tagsynth,collgrade,ckrun} "$OUT/bin/"
cp "$B"/lib/*.a "$OUT/lib/"
# Headers of the public interfaces the plug-in program is built against.
cp "$SRC"/collectives/include/*.h "$SRC"/checker/collcheck.h "$SRC"/bench/collbench.h "$SRC"/bench/model.h \
   "$SRC"/trainer/tagtrain.h "$OUT/include/"
cp "$SRC/cmake/CollkitPlugin.cmake" "$OUT/cmake/"
cp "$SRC/plugin/main.c" "$SRC/plugin/save.c" "$OUT/plugin/"
# The imported targets, pointed at the kit instead of the build tree.
sed -e "s|$B/lib/|\${_KIT}/lib/|g" \
    -e "s|\"-iquote;$SRC/datasets\"|\"\"|g" \
    -e "s|$SRC/collectives/include|\${_KIT}/include|g; s|$SRC/checker|\${_KIT}/include|g" \
    -e "s|$SRC/bench|\${_KIT}/include|g; s|$SRC/trainer|\${_KIT}/include|g" \
    "$B/collkit-targets.cmake" > "$OUT/cmake/collkit-targets.cmake"
if grep -q "$SRC\|$B" "$OUT/cmake/collkit-targets.cmake"; then
  echo "student-kit: the exported targets still name the build tree:" >&2
  grep -n "$SRC\|$B" "$OUT/cmake/collkit-targets.cmake" >&2; exit 1
fi
sed -e "s|include(\"$B/collkit-targets.cmake\")|get_filename_component(_KIT \"\${CMAKE_CURRENT_LIST_DIR}\" ABSOLUTE)\ninclude(\"\${_KIT}/cmake/collkit-targets.cmake\")|" \
    -e "s|include(\"$SRC/cmake/CollkitPlugin.cmake\")|include(\"\${_KIT}/cmake/CollkitPlugin.cmake\")|" \
    -e "s|$B|(the kit)|g" \
    "$B/collkit-plugin-env.cmake" > "$OUT/collkit-plugin-env.cmake"
cp "$B/bin/collkit-cc" "$OUT/bin/collkit-cc"

# Labs: handouts, lab.conf, and the skeletons as the students' working files.
for lab in "$SRC"/labs/[0-9][0-9]-*/; do
  name=$(basename "$lab")
  mkdir -p "$OUT/labs/$name"
  for f in "$lab"*; do
    case $(basename "$f") in solution|instructor|skeleton) continue ;; esac
    cp -r "$f" "$OUT/labs/$name/"
  done
  [ -d "$lab/skeleton" ] && cp "$lab"/skeleton/* "$OUT/labs/$name/"
done
cp "$SRC/labs/README.md" "$SRC/labs/allowed-symbols.txt" "$OUT/labs/"   # the grader reads the allow list
# How the trainer's step works (lab 04): its README, which has no algorithm code.
cp "$SRC/trainer/README.md" "$OUT/docs/trainer.md"

# What each built-in algorithm does, without its code: the comment above the
# first #include of its file.
sed -n 's/^CK_ALGO(\([a-z0-9_]*\))$/\1/p' "$SRC/collectives/algos/algos.def" | sort -u | while read -r a; do
  f=$(ls "$SRC/collectives/algos/$a.c" "$SRC/collectives/algos/cuda/$a.c" 2>/dev/null | head -1) || true
  [ -n "$f" ] || continue
  { echo "# $a"; echo; echo '```'; awk '/^#include/ { exit } { print }' "$f" | sed 's|^/\*||; s|^ \*/||; s|^ \* \{0,1\}||'; echo '```'; } \
    > "$OUT/docs/algorithms/$a.md"
done

cat > "$OUT/README.md" <<'MD'
# collkit — student kit

Everything you need for the labs: the handouts in `labs/`, the tools in `bin/`, and the library
with its reference algorithms (compiled: compare yours with them, e.g. `--algo ring,my_ring`;
what each one does is in `docs/algorithms/`).

```sh
make lab01                      # build your labs/01-ring/my_ring.c and grade it (collgrade)
build/bin/ckrun -np 4 build/labs/01-ring/lab check --algo my_ring --quick   # the checker alone
build/bin/ckrun -np 4 build/labs/01-ring/lab bench --algo ring,my_ring      # the benchmark
```

The paths are those of the full repository (`build/bin` is a link to `bin`): every command in the
handouts works here as written.

`bin/collkit-cc FILE.c -o PROGRAM` builds any algorithm file into one program that is collcheck,
collbench and tagtrain (`PROGRAM check|bench|train|list`). `bin/ckrun` is `mpirun` with the flags
a laptop needs (more ranks than cores, running as root); on a cluster use `mpirun` or `srun`.
Needs: Open MPI, OpenBLAS, CMake, a C compiler (Debian: `apt-get install openmpi-bin libopenmpi-dev
libopenblas-dev cmake gcc`); bubblewrap (`bubblewrap`) is wanted: with it the grader runs your program
in a sandbox, as your instructor's grader does.

What your file may call is listed in `labs/allowed-symbols.txt` (the grader's integrity part; a lab
may add to it in its `lab.conf`). A grade marked PARTIAL (exit status 3) left something out, e.g.
rank counts above `--np-max`: it is not your final grade. `bin/collgrade --help` says how each part is
graded.
MD
cat > "$OUT/Makefile" <<'MK'
# make labNN: build your file of lab NN and grade it.
lab%:
	@bin/collgrade $*
.PHONY: lab%
MK
# The same paths as in a built repository: build/bin/ckrun, build/labs/NN-*/lab
# (collgrade puts each lab's program there), so every handout command works
# as written in the kit too.
mkdir -p "$OUT/build/labs"
ln -s ../bin "$OUT/build/bin"
touch "$OUT/.collkit-student-kit"
tar -czf "$OUT.tar.gz" -C "$(dirname "$OUT")" "$(basename "$OUT")"
echo "student-kit: $OUT ($(du -sh "$OUT" | cut -f1)) and $OUT.tar.gz"
