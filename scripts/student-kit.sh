#!/usr/bin/env bash
# student-kit.sh BUILD_DIR OUT_DIR — the folder (and OUT_DIR.tar.gz) a course
# hands to its students: the handouts and skeletons, the tools (collcheck,
# collverify, collbench, tagtrain, tagpredict, ckptdiff, tagsynth, collgrade, collkit-cc,
# ckrun), the Made With ML data (datasets/madewithml/, with its licence), the
# CUDA plug-ins where this build has them (lib/libcollkit_cuda.so and
# lib/libtagtrain_cuda.so: opened only when device memory is used, so the kit
# runs without CUDA), and the library with
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
for f in bin/collcheck bin/collverify bin/collbench bin/tagtrain bin/tagpredict bin/ckptdiff bin/tagsynth bin/collkit-cc bin/collgrade \
         bin/grader/__init__.py bin/ckrun collkit-targets.cmake; do
  [ -e "$B/$f" ] || { echo "student-kit: $B/$f is missing: build first (make)" >&2; exit 2; }
done
# The Made With ML data (MIT licence), from where this build's programs find
# it: $COLLKIT_DATA, else the repository's datasets/madewithml/ or the
# ../shared beside it (datasets/README.md).
data=""
for d in "${COLLKIT_DATA:-}" "$SRC/datasets/madewithml" "$SRC/../shared/datasets/madewithml"; do
  if [ -n "$d" ] && [ -f "$d/dataset.csv" ] && [ -f "$d/holdout.csv" ]; then data=$d; break; fi
done
if [ -z "$data" ]; then
  echo "student-kit: warning: no Made With ML data here (dataset.csv, holdout.csv): the kit goes without it," >&2
  echo "student-kit: and its students run datasets/fetch (or run it here first, or set COLLKIT_DATA)" >&2
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
mkdir -p "$OUT"/{bin,lib,include,cmake,plugin,labs,docs/algorithms}

# Tools and libraries (compiled; the algorithms' code is inside libcollkit.a).
# (ckptdiff and tagsynth: lab 04's equivalence part compares checkpoints of runs on synthetic data.)
cp "$B"/bin/{collcheck,collverify,collbench,tagtrain,tagpredict,ckptdiff,tagsynth,collgrade,ckrun} "$OUT/bin/"
# (collgrade's modules, Python's standard library only, beside it)
mkdir -p "$OUT/bin/grader" && cp "$B"/bin/grader/*.py "$OUT/bin/grader/"
cp "$B"/lib/*.a "$OUT/lib/"
# The CUDA plug-ins, when this build has them: opened only where device memory
# is used (libcollkit_cuda.so) or tagtrain runs --device cuda (libtagtrain_cuda.so).
for f in libcollkit_cuda.so libtagtrain_cuda.so; do
  if [ -f "$B/lib/$f" ]; then cp "$B/lib/$f" "$OUT/lib/"; fi
done
# Headers of the public interfaces the plug-in program is built against.
cp "$SRC"/collectives/include/*.h "$SRC"/checker/collcheck.h "$SRC"/bench/collbench.h "$SRC"/bench/model.h \
   "$SRC"/trainer/tagtrain.h "$SRC"/trainer/collkit_pp.h "$SRC"/draw/colldraw.h "$OUT/include/"
cp "$SRC/cmake/CollkitPlugin.cmake" "$OUT/cmake/"
cp "$SRC/plugin/main.c" "$SRC/plugin/save.c" "$SRC/plugin/confine.c" "$SRC/plugin/isolate_host.c" "$OUT/plugin/"
# The isolated runs' trusted program and references (plugin/isolate_host.c), where this build has them.
for f in collkit-host collkit-ref.algo; do
  if [ -x "$B/bin/$f" ]; then cp "$B/bin/$f" "$OUT/bin/"; fi
done
# The imported targets, pointed at the kit instead of the build tree.
sed -e "s|$B/lib/|\${_KIT}/lib/|g" \
    -e "s|\"-iquote;$SRC/datasets\"|\"\"|g" \
    -e "s|$SRC/collectives/include|\${_KIT}/include|g; s|$SRC/checker|\${_KIT}/include|g" \
    -e "s|$SRC/bench|\${_KIT}/include|g; s|$SRC/trainer|\${_KIT}/include|g; s|$SRC/draw|\${_KIT}/include|g" \
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
# The data in datasets/madewithml/, where the kit's programs look first
# (beside their bin/), copied by datasets/fetch: sha256 checked, with LICENSE
# and SOURCE.md. fetch and the licence go along, for a fresh copy.
mkdir -p "$OUT/datasets"
cp "$SRC/datasets/fetch" "$SRC/datasets/madewithml.LICENSE" "$OUT/datasets/"
if [ -n "$data" ]; then
  COLLKIT_FETCH_FROM=$data "$OUT/datasets/fetch" --dest "$OUT/datasets/madewithml" > /dev/null
fi
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

# Pictures: every host algorithm of each registry drawn step by step by colldraw,
# one page each that works offline: docs/algorithms/NAME-pP.html for the
# all-reduces at 4 and 6 ranks (6: the fold of rd and rabenseifner),
# reduce_scatter-NAME-p4.html and allgather-NAME-p4.html for the halves.
# colldraw itself is in bin/ and in every lab program (`lab draw --algo my_ring --np 4`).
[ -x "$B/bin/colldraw" ] || { echo "student-kit: $B/bin/colldraw is missing: build first (make)" >&2; exit 2; }
cp "$B/bin/colldraw" "$OUT/bin/"
draws=$(mktemp -d)
for coll in allreduce reduce_scatter allgather; do
  pre=$coll- nps=4; [ $coll = allreduce ] && pre= nps="4 6"
  "$B/bin/colldraw" --coll $coll --algo list | awk 'NR > 1 && $2 ~ /host/ && !/reference/ { print $1 }' | while read -r a; do
    for p in $nps; do
      "$B/bin/colldraw" --coll $coll --algo "$a" --np $p --count $((2 * p)) --out "$draws/$pre$a-p$p" < /dev/null > "$draws/log" 2>&1 ||
        { cat "$draws/log" >&2; echo "student-kit: colldraw --coll $coll --algo $a --np $p failed" >&2; exit 2; }
      cp "$draws/$pre$a-p$p/index.html" "$OUT/docs/algorithms/$pre$a-p$p.html"
    done
  done || { rm -rf "$draws"; exit 2; }
done
rm -rf "$draws"

cat > "$OUT/README.md" <<'MD'
# collkit — student kit

Everything you need for the labs: the handouts in `labs/`, the tools in `bin/`, the data in
`datasets/madewithml/`, and the library with its reference algorithms (compiled: compare yours
with them, e.g. `--algo ring,my_ring`; what each one does is in `docs/algorithms/`).

```sh
make lab01                      # build your labs/01-ring/my_ring.c and grade it (collgrade)
build/bin/ckrun -np 4 build/labs/01-ring/lab check --algo my_ring --quick   # the checker alone
build/bin/ckrun -np 4 build/labs/01-ring/lab bench --algo ring,my_ring      # the benchmark
```

The paths are those of the full repository (`build/bin` is a link to `bin`): every command in the
handouts works here as written. The kit can live in any folder: nothing in it names the machine
it was made on.

`bin/collkit-cc FILE.c -o PROGRAM` builds any algorithm file into one program that is collcheck,
collbench, tagtrain and colldraw (`PROGRAM check|bench|train|draw|list`); `docs/algorithms/NAME-p4.html`
shows each library algorithm step by step (`reduce_scatter-NAME-p4.html`, `allgather-NAME-p4.html`
the halves lab 07 builds on), and `build/labs/01-ring/lab draw --algo my_ring --np 4`
draws yours the same way (`bin/colldraw --help`). `bin/ckrun` is `mpirun` with the flags
a laptop needs (more ranks than cores, running as root); on a cluster use `mpirun` or `srun`.

## What to install

The programs in `bin/` are Linux x86-64 programs built against Open MPI (`libmpi.so.40`: Open MPI
3.0 to 5.x) and OpenBLAS (`libopenblas.so.0`); `collkit-cc` builds your files with CMake (3.18
or newer), a C compiler and Open MPI's `mpicc`. MPICH, Intel MPI or MVAPICH cannot run these
programs: use Open MPI. CUDA is not needed: the GPU parts (lab 05's device part) are reported
`blocked` where there is no GPU, and every other part runs without it. `bubblewrap` is the
sandbox `bin/collgrade` grades you in, as your instructor's grader does (see Grading yourself).

- **Debian, Ubuntu** (tested: Debian 12):

      sudo apt-get install build-essential cmake pkg-config openmpi-bin libopenmpi-dev libopenblas-dev bubblewrap

- **Fedora** (not tested here): Open MPI is installed as an environment module, which must be
  loaded in every shell (or in `~/.bashrc`) before `make labNN`:

      sudo dnf install gcc make cmake pkgconf-pkg-config openmpi openmpi-devel openblas-devel environment-modules bubblewrap
      module load mpi/openmpi-x86_64

- **macOS** (not tested here): the programs in `bin/` are Linux programs and do not run on macOS.
  Either work in a Linux virtual machine or container (e.g. `docker run -it -v "$PWD":/kit
  debian:12`, then the Debian line above), or build the course's collkit repository natively and
  make a kit from it (`make student-kit`) with Open MPI and OpenBLAS from Homebrew:

      xcode-select --install
      brew install open-mpi openblas cmake pkg-config
      export PKG_CONFIG_PATH="$(brew --prefix openblas)/lib/pkgconfig"

  On macOS the programs cannot find their own folder the Linux way: point them at the data with
  `export COLLKIT_DATA=$PWD/datasets/madewithml`.

- **A cluster with environment modules** (not tested here): load a compiler, CMake, Open MPI and
  OpenBLAS (names differ between sites: `module avail`), for example

      module load gcc cmake openmpi openblas

  and run the programs on compute nodes through the scheduler (`srun -n 4 build/labs/01-ring/lab
  check --algo my_ring`, or `salloc` then `mpirun`) rather than on the login node. `collgrade`
  uses `bin/ckrun`, i.e. `mpirun`: run it inside an allocation (`salloc -n 8`).

## The data

`datasets/madewithml/` holds the Made With ML tagging dataset (`dataset.csv`, `holdout.csv`;
MIT License, Copyright (c) 2023 Made With ML: `LICENSE` and `SOURCE.md` beside them). The programs
find it relative to themselves; `COLLKIT_DATA=FOLDER` or `--data FILE` names another.
`datasets/fetch` downloads a fresh, checked copy.

## Grading yourself

`bubblewrap` (Debian/Ubuntu/Fedora package `bubblewrap`) is wanted: with it `bin/collgrade` runs
your program in a sandbox, as your instructor's grader does; without it each run is still a process
group of its own. What your file may call is listed in `labs/allowed-symbols.txt` (the grader's integrity part; a lab
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
