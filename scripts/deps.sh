#!/usr/bin/env bash
# Make sure what collkit builds against is there: Open MPI (mpicc, mpirun,
# mpi.h), OpenBLAS (cblas.h, libopenblas), cmake, gnuplot.
#
# Each need is checked by what the build uses — a command on PATH, a header
# that compiles, a library that links — and only then by the Debian package
# status, so a machine with the tools installed some other way (an offline GPU
# box with Open MPI unpacked from .debs, a module system) never reaches
# apt-get. For what is really missing: as root, apt-get installs the Debian
# packages; otherwise the exact command is printed and the script exits
# non-zero, so `make` stops with a clear message.
set -eu

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

[ -z "$missing" ] && exit 0
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
else
  echo "collkit: missing Debian packages:$missing" >&2
  echo "collkit: run:  sudo apt-get update && sudo apt-get install -y$missing" >&2
  exit 1
fi
