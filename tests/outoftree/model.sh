#!/usr/bin/env bash
# model.sh OOT MPIRUN [FLAGS...] — an out-of-tree algorithm's cost function
# reaches collbench's model column: with fixed parameters (α = 1 µs,
# β = 1 ns/B, γ = 0.5 ns/B), every model_us of oot_star at p = 2 must be
# (p-1)(α + nβ) + (p-1)nγ, the formula in star.c.
set -eu
B=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'alpha_us 1\nbeta_ns_per_byte 1\ngamma_ns_per_byte 0.5\n' > "$dir/params.txt"
"$@" -np 2 "$B" bench --algo oot_star -b 1K -e 64K -f 4 -n 2 -w 0 -c 1 --place out \
    --model "$dir/params.txt" --csv "$dir/r.csv" > "$dir/out.txt" || { cat "$dir/out.txt"; echo "FAIL: sweep"; exit 1; }
cat "$dir/out.txt"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         { n = $c["bytes"]; want = 1 + n * 1e-3 + n * 0.5e-3; rows++
           if ($c["algo"] != "oot_star" || $c["model_us"] - want > 1e-3 || want - $c["model_us"] > 1e-3) {
               printf "FAIL: %s n=%d model_us %s, expected %.4f\n", $c["algo"], n, $c["model_us"], want; bad = 1 } }
         END { if (rows != 4) { printf "FAIL: %d rows, expected 4\n", rows; bad = 1 }
               printf "%d passed, %d failed\n", rows - bad, bad; exit bad }' "$dir/r.csv"
