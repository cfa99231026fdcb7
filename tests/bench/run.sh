#!/usr/bin/env bash
# run.sh COLLBENCH MPIRUN [FLAGS...] — collbench end to end on 2 ranks, tiny
# sizes: ping-pong writes a parameter file, the sweep reads it (model column)
# and writes CSV and JSON with a row per algorithm and size, all #wrong 0;
# --extrapolate turns the file into a model table. Checks results, not times.
set -eu
B=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$@" -np 2 "$B" --pingpong -b 8 -e 64K -f 8 -n 5 --save-model "$dir/params.txt" --csv "$dir/pp.csv" \
    || fail "pingpong"
grep -q '^alpha_us ' "$dir/params.txt" || fail "no alpha in params.txt"
[ "$(wc -l < "$dir/pp.csv")" = 6 ] || fail "pingpong.csv should have 5 sizes"
"$@" -np 2 "$B" --algo all -b 8 -e 4K -f 8 -n 3 -w 1 -c 1 --model "$dir/params.txt" \
    --csv "$dir/r.csv" --json "$dir/r.json" > "$dir/out.txt" || { cat "$dir/out.txt"; fail "sweep"; }
cat "$dir/out.txt"
grep -q '^# Out of bounds values : 0 OK' "$dir/out.txt" || fail "wrong results"
nalgo=$("$B" --algo list | awk 'NR > 1 && $2 ~ /host/' | wc -l)   # the host sweep runs host algorithms
# 4 sizes (8, 64, 512, 4096) x 2 places per algorithm
[ "$(tail -n +2 "$dir/r.csv" | wc -l)" = $((nalgo * 8)) ] || fail "expected $((nalgo * 8)) CSV rows"
awk -F, 'NR > 1 && $14 != 0 { bad = 1 } END { exit bad }' "$dir/r.csv" || fail "a #wrong is not 0"
awk -F, 'NR > 1 && $1 == "ring" && !($15 > 0) { bad = 1 } END { exit bad }' "$dir/r.csv" || fail "ring has no model"
if command -v python3 >/dev/null; then
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['results']) == $((nalgo * 8)), len(d['results'])" \
      "$dir/r.json" || fail "JSON"
fi
# --chunk reaches the algorithms: the header says so and the chunked ones stay correct.
"$@" -np 2 "$B" --algo ring_pipelined,tree -b 4K -e 64K -f 4 -n 2 -w 0 -c 1 --chunk 1K --model none \
    > "$dir/chunk.txt" || { cat "$dir/chunk.txt"; fail "sweep with --chunk"; }
grep -q 'pipeline chunk 1024 B' "$dir/chunk.txt" || fail "--chunk 1K not applied"
grep -q '^# Out of bounds values : 0 OK' "$dir/chunk.txt" || fail "wrong results with --chunk 1K"
# --paired: one row per size, both algorithms checked, the speed column a positive number.
"$@" -np 2 "$B" --paired --algo ring,naive -b 1K -e 64K -f 8 -n 6 -w 1 --model none --csv "$dir/pair.csv" \
    > "$dir/pair.txt" || { cat "$dir/pair.txt"; fail "--paired"; }
[ "$(tail -n +2 "$dir/pair.csv" | wc -l)" = 3 ] || fail "--paired: expected 3 sizes"
awk -F, 'NR > 1 && (!($7 > 0) || $11 != 0 || $12 != 0 || $10 != 6) { bad = 1 } END { exit bad }' "$dir/pair.csv" \
    || fail "--paired: bad row in $(cat "$dir/pair.csv")"
"$B" --extrapolate --model "$dir/params.txt" --csv "$dir/x.csv" > "$dir/x.txt" || fail "extrapolate"
grep -q 'p =  4096' "$dir/x.txt" || fail "extrapolation stops before 4096 ranks"
grep -q '^ring,4096,1073741824,' "$dir/x.csv" || fail "extrap.csv lacks ring at p = 4096, 1 GB"
echo "collbench end-to-end ok"
