#!/usr/bin/env bash
# make.sh [BUILD_SMPI] — regenerate scale.csv, the simulated figures deck 03 draws (p = 16 to
# 1024, which this machine cannot be), with the steps of scripts/sim-bench.sh: a ping-pong
# on the crossbar recovers α and β (params.txt), then collbench, compiled with smpicc, times one
# all-reduce of 256 B and of 1 MiB (sizes make sim-bench measures at every
# rank count) per algorithm and rank count (timing runs, folded buffers).
# The ring stops at p = 256: at 1024 one call is two million simulated messages.
# Then deck 04's trainer figure: tagtrain weak scaling at p = 1 to 64 with make sim-bench's
# trainer step (16 rows per rank and step, tagsynth data, compute charged as modelled flops).
# Writes scale.csv, trainer.csv, params.txt and platform.txt here, about the run: the SimGrid
# version, the date, the commands. make sim-bench's own sweep.csv, where present, is drawn instead
# (scripts/slides.sh): these files are what a clean clone draws.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SB=$(cd "${1:-$root/build-smpi}" && pwd)
for t in collbench tagtrain; do
  [ -x "$SB/bin/$t" ] || { echo "make.sh: $SB/bin/$t not built (cmake -S . -B build-smpi -DCOLLKIT_SMPI=ON && cmake --build build-smpi --target collbench tagtrain)" >&2; exit 1; }
done
[ -x "$root/build/bin/tagsynth" ] || { echo "make.sh: $root/build/bin/tagsynth not built (make)" >&2; exit 1; }
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
# the trainer, as make sim-bench runs it (scripts/sim-bench.sh, step 5)
rows=$((64 * 16 * 4 * 5 / 4))
"$root/build/bin/tagsynth" --rows "$rows" --out "$tmp/data.csv" --overwrite > /dev/null
"$root/build/bin/tagsynth" --rows 512 --seed 2 --out "$tmp/holdout.csv" --overwrite > /dev/null
echo "algo,p,samples_per_s,efficiency,comm_fraction" > "$tmp/trainer.csv"
s1= c1=
for a in ring rabenseifner rd; do
  for p in 1 2 4 8 16 32 64; do
    # p = 1 has no all-reduce to choose: run once, its row repeated per algorithm
    [ -z "$s1" ] || [ $p != 1 ] || { echo "$a,1,$s1,1.000,$c1" >> "$tmp/trainer.csv"; continue; }
    run "$root/sim/simrun" -np $p "$SB/bin/tagtrain" --algo $a --batch $((16 * p)) --data "$tmp/data.csv" \
        --holdout "$tmp/holdout.csv" --features 4096 --char-ngrams off --hidden 64 --epochs 2 --no-save --quiet \
        --log "$tmp/t.jsonl" > "$tmp/t.txt"
    # samples/s and the communication fraction of the summary; efficiency against p = 1
    read -r s c < <(sed -n 's/.*"type":"summary".*"samples_per_s":\([0-9.e+-]*\),"comm_fraction":\([0-9.e+-]*\).*/\1 \2/p' "$tmp/t.jsonl")
    [ -n "$s1" ] || s1=$s c1=$c
    awk -v a=$a -v p=$p -v s="$s" -v s1="$s1" -v c="$c" 'BEGIN { printf "%s,%d,%s,%.3f,%s\n", a, p, s, s / (p * s1), c }' >> "$tmp/trainer.csv"
  done
done
cp "$tmp/trainer.csv" "$here/trainer.csv"
cp "$tmp/params.txt" "$here/params.txt"
sg=$(smpirun -version 2>/dev/null | head -1 | sed 's/^This program was linked against //; s/ (git:.*//; s/\.$//')
{
  # the keys of make sim-bench's platform.txt, and where and when this ran
  echo "name crossbar"
  echo "desc every host its own full-duplex 25 Gb/s link to one non-blocking switch (sim/platforms/crossbar-N.xml)"
  echo "alpha_us 1"
  echo "bw_gbs 3.125"
  echo "run $sg, $(date -u +%Y-%m-%d), slides/sim/make.sh"
  echo "trainer_run $sg, $(date -u +%Y-%m-%d), slides/sim/make.sh"
  echo "how sim/simrun -np P -fold collbench --algo A -b 256 -e 1M -f 4096 -n 1 -w 0 --place out -c 0"
} > "$here/platform.txt"
echo "make.sh: $here/scale.csv ($(($(wc -l < "$here/scale.csv") - 1)) rows)"
