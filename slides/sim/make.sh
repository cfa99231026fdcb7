#!/usr/bin/env bash
# make.sh [BUILD_SMPI] — regenerate scale.csv, the simulated figures deck 03 draws (p = 16 to
# 1024, which this machine cannot be), with the steps of scripts/sim-bench.sh: a ping-pong
# on the crossbar recovers α and β (params.txt), then collbench, compiled with smpicc, times one
# all-reduce of 256 B and of 1 MiB (sizes make sim-bench measures at every
# rank count) per algorithm and rank count (timing runs, folded buffers).
# The ring stops at p = 256: at 1024 one call is two million simulated messages.
# Writes scale.csv, params.txt and platform.txt here, about the run: the SimGrid version, the
# date, the commands. make sim-bench's own sweep.csv, where present, is drawn instead
# (scripts/slides.sh): these files are what a clean clone draws.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SB=$(cd "${1:-$root/build-smpi}" && pwd)
[ -x "$SB/bin/collbench" ] || { echo "make.sh: $SB/bin/collbench not built (cmake -S . -B build-smpi -DCOLLKIT_SMPI=ON && cmake --build build-smpi --target collbench)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { echo "+ $*" >&2; "$@"; }
run "$root/sim/simrun" -np 2 "$SB/bin/collbench" --pingpong -b 8 -e 64M -f 4 --save-model "$tmp/params.txt" > "$tmp/pp.txt"
for p in 16 64 256 1024; do
  algos="ring rd rabenseifner tree2"; [ $p = 1024 ] && algos="rd rabenseifner tree2"
  for a in $algos; do
    run "$root/sim/simrun" -np $p -fold "$SB/bin/collbench" --algo $a -b 256 -e 1M -f 4096 -n 1 -w 0 --place out -c 0 \
        --model "$tmp/params.txt" --csv "$tmp/$p-$a.csv" > "$tmp/$p-$a.txt"
  done
done
{ head -1 "$tmp/16-ring.csv"; for f in "$tmp"/*-*.csv; do tail -n +2 "$f"; done | sort -t, -k1,1 -k2,2n -k3,3n; } > "$here/scale.csv"
cp "$tmp/params.txt" "$here/params.txt"
{
  # the keys of make sim-bench's platform.txt, and where and when this ran
  echo "name crossbar"
  echo "desc every host its own full-duplex 25 Gb/s link to one non-blocking switch (sim/platforms/crossbar-N.xml)"
  echo "alpha_us 1"
  echo "bw_gbs 3.125"
  echo "run $(smpirun -version 2>/dev/null | head -1 | sed 's/^This program was linked against //; s/ (git:.*//; s/\.$//'), $(date -u +%Y-%m-%d), slides/sim/make.sh"
  echo "how sim/simrun -np P -fold collbench --algo A -b 256 -e 1M -f 4096 -n 1 -w 0 --place out -c 0"
} > "$here/platform.txt"
echo "make.sh: $here/scale.csv ($(($(wc -l < "$here/scale.csv") - 1)) rows)"
