#!/usr/bin/env bash
# ranks.sh BINDIR MPIRUN [FLAGS...] — collbench and collcheck given other
# options on different ranks (an MPMD launch, A : B) stop at once on every
# rank, exit 2, with both command lines; never a hang, an error from inside
# MPI, or a correct algorithm blamed for the difference.
set -u
B=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
mpmd() { timeout 60 "$@"; }
for t in "collbench -b 1K -e 1K -n 5|-n 20" "collbench -b 1K -e 1K -w 0|-b 2K -e 2K -w 0" \
         "collbench --algo ring --transport mpi|--algo ring --transport shm" \
         "collcheck --algo ring --count 7 --repeat 1|--repeat 3" "collcheck --algo ring_pipelined --count 100 --chunk 64|--chunk 128"; do
  tool=${t%% *} rest=${t#* } a=${t%%|*} b=${t#*|}
  a=${a#* }
  mpmd "$@" -np 1 "$B/$tool" $a : -np 1 "$B/$tool" $a $b > "$dir/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "$tool: the ranks were given different command lines" "$dir/o" && grep -q "rank 1: .*${b##* }" "$dir/o"' \
        "$tool '$a' vs '$a $b': rc $rc (124: it hung) $(head -5 "$dir/o")"
done
# The same options everywhere still run.
"$@" -np 2 "$B/collcheck" --algo ring --count 7 > "$dir/o" 2>&1; rc=$?
check '[ $rc -eq 0 ] && grep -q " 0 failed" "$dir/o"' "the same options: rc $rc $(tail -3 "$dir/o")"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
