#!/usr/bin/env bash
# Make sure what collkit builds against is there: Open MPI (mpicc, mpirun,
# mpi.h), OpenBLAS (cblas.h, libopenblas), cmake, gnuplot; and SimGrid
# (smpicc, smpirun: libsimgrid-dev) for the simulated clusters.
#
# Each need is checked by what the build uses — a command on PATH, a header
# that compiles, a library that links — and only then by the Debian package
# status, so a machine with the tools installed some other way (an offline GPU
# box with Open MPI unpacked from .debs, a module system) never reaches
# apt-get. For what is really missing: as root, apt-get installs the Debian
# packages; otherwise the exact command is printed and the script exits
# non-zero, so `make` stops with a clear message.
#
# SimGrid is wanted, not required, by `make` and `make test`: with it the
# suite also runs the checker on simulated clusters (tests/sim, label sim,
# about a minute); without it those tests are skipped. So as root it is
# installed with the rest when apt-get runs anyway, or alone when the package
# lists already know it; a machine that lacks only SimGrid never triggers an
# apt-get update (an offline box must not stall on every make), and a missing
# SimGrid never fails the script. COLLKIT_SIMGRID=require (what make
# sim-bench sets) makes it a need like the others; COLLKIT_SIMGRID=0 skips it.
#
# bubblewrap (bwrap) is wanted the same way: collgrade runs each run of a
# student's program in a sandbox with it, and its --batch mode needs it
# (without it a single grading still works, and the batch test is skipped).
# As root it is installed when the package lists know it; otherwise a note.
# Chromium (draw.html) is wanted by one test and never installed: a note names
# the test skipped.
set -eu
SIMGRID=${COLLKIT_SIMGRID:-want}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

have() { command -v "$1" >/dev/null 2>&1; }

# A C file including <header> compiles and links with the given flags.
compiles() {   # compiles CC HEADER FLAGS...
  local cc=$1 header=$2; shift 2
  printf '#include <%s>\nint main(void) { return 0; }\n' "$header" > "$tmp/t.c"
  "$cc" "$tmp/t.c" -o "$tmp/t" "$@" >/dev/null 2>&1
}

mpi_runtime() { have mpirun || have mpiexec; }
mpi_dev()     { have mpicc && compiles mpicc mpi.h; }
openblas() {
  have cc || return 1
  if have pkg-config && pkg-config --exists openblas 2>/dev/null; then
    # shellcheck disable=SC2046
    compiles cc cblas.h $(pkg-config --cflags --libs openblas) && return 0
  fi
  # Debian keeps the OpenBLAS cblas.h under an alternatives folder (trainer/CMakeLists.txt).
  for inc in /usr/include/*/openblas-pthread /usr/include/*/openblas-openmp /usr/include/openblas /usr/include; do
    [ -f "$inc/cblas.h" ] && compiles cc cblas.h -I"$inc" -lopenblas && return 0
  done
  return 1
}
gnuplot_() { have gnuplot; }
cmake_()   { have cmake; }
simgrid()  { have smpicc && have smpirun && smpicc -version >/dev/null 2>&1; }

# need PACKAGE CHECK: the Debian package that provides what CHECK looks for.
missing=""
need() {
  local pkg=$1 check=$2
  "$check" && return 0
  if have dpkg-query && dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    # Installed, yet not usable as the build needs it: apt-get cannot help.
    echo "collkit: $pkg is installed but its check ($check) fails: is it on PATH?" >&2
    return 0
  fi
  missing="$missing $pkg"
}
need openmpi-bin     mpi_runtime
need libopenmpi-dev  mpi_dev
need libopenblas-dev openblas
need gnuplot-nox     gnuplot_
need cmake           cmake_
[ "$SIMGRID" = require ] && need libsimgrid-dev simgrid

# SimGrid when wanted: a note, never a failure (see the top).
want_simgrid=0
if [ "$SIMGRID" = want ] && ! simgrid; then
  if [ "$(id -u)" -eq 0 ] && have apt-get; then
    want_simgrid=1
  else
    echo "collkit: note: SimGrid is not installed, so the simulated-cluster tests are skipped" \
         "(sudo apt-get install libsimgrid-dev, or make sim-bench)" >&2
  fi
fi
# Wanted by a few tests, never installed here (large, or needed only where root is not):
# a note says which tests are skipped without it.
if ! have chromium && ! have chromium-browser && ! have google-chrome; then
  echo "collkit: note: no Chromium, so draw.html (colldraw's page in a headless browser) is skipped" \
       "(sudo apt-get install chromium)" >&2
fi
if [ "$(id -u)" -ne 0 ] && ! have bwrap; then
  echo "collkit: note: no bubblewrap and not root, so labs.kit_cleanroot (the student kit in a mount" \
       "namespace) is skipped (sudo apt-get install bubblewrap)" >&2
fi
# Installed alone only when the package lists already know it (no update).
simgrid_known() { have apt-cache && apt-cache policy libsimgrid-dev 2>/dev/null | grep -q 'Candidate: [0-9]'; }
install_simgrid() {
  echo "collkit: installing SimGrid (libsimgrid-dev) for the simulated-cluster tests" >&2
  apt-get install -y -qq --no-install-recommends libsimgrid-dev >/dev/null ||
    echo "collkit: note: SimGrid could not be installed; the simulated-cluster tests are skipped" >&2
}

# bubblewrap when wanted: installed by apt-get without an update, never a failure.
if ! have bwrap; then
  if [ "$(id -u)" -eq 0 ] && have apt-cache && apt-cache policy bubblewrap 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    echo "collkit: installing bubblewrap (collgrade's sandbox)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null ||
      echo "collkit: note: bubblewrap could not be installed; collgrade --batch is unavailable" >&2
  else
    echo "collkit: note: bubblewrap is not installed: collgrade runs students' programs without a sandbox, and --batch is unavailable" \
         "(sudo apt-get install bubblewrap)" >&2
  fi
fi

if [ -z "$missing" ]; then
  if [ "$want_simgrid" = 1 ]; then
    export DEBIAN_FRONTEND=noninteractive
    if simgrid_known; then install_simgrid
    else echo "collkit: note: SimGrid is not installed (the simulated-cluster tests are skipped); make sim-bench installs it" >&2
    fi
  fi
  exit 0
fi
if ! have apt-get; then
  echo "collkit: missing:$missing (Debian package names); install them with your package manager" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  echo "collkit: installing missing packages:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086  # one word per package
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
  [ "$want_simgrid" = 1 ] && install_simgrid
else
  echo "collkit: missing Debian packages:$missing" >&2
  echo "collkit: run:  sudo apt-get update && sudo apt-get install -y$missing" >&2
  exit 1
fi
exit 0
