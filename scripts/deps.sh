#!/usr/bin/env bash
# Make sure the Debian packages collkit builds against are installed.
# As root: installs what is missing with apt-get. Otherwise: prints the exact
# command to run and exits non-zero, so `make` stops with a clear message.
set -eu
pkgs="openmpi-bin libopenmpi-dev libopenblas-dev gnuplot-nox cmake"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "collkit: installing missing packages:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "collkit: missing Debian packages:$missing" >&2
  echo "collkit: run:  sudo apt-get update && sudo apt-get install -y$missing" >&2
  exit 1
fi
