#!/usr/bin/env bash
# options.sh COLLCHECK — bad command lines get a clear message naming the
# option and exit 2, before MPI starts (so no mpirun is needed): every
# numeric option against an empty value, NaN and inf (none of them may read
# as 0 or "off"), the list options against empty lists.
set -u
C=$1
. "$(dirname "$0")/../lib/expect.sh"
expect() { local code=$1 re=$2; shift 2; expect_run "$code" "$re" "$C" "$@"; }   # expect CODE REGEX ARGS...
for opt in --count --repeat --timeout --chunk; do
  expect 2 "collcheck: bad $opt '': .*(empty|expected)" "$opt" ""
  for v in nan inf -inf; do expect 2 "collcheck: bad $opt '$v'" "$opt" "$v"; done
done
expect 2 "bad --timeout 'nan': not a finite number"             --timeout nan
expect 2 "bad --timeout 'inf': not a finite number"             --timeout inf
expect 2 "bad --timeout '': expected a number, got an empty string"  --timeout ""
expect 2 "bad --timeout '1e7': must be between 0 and 1e\+06"     --timeout 1e7
expect 2 "bad --timeout '0x10': expected a number"              --timeout 0x10
expect 2 "bad --timeout ' 5': expected a number"                --timeout " 5"
for opt in --dtype --op --count; do
  expect 2 "collcheck: bad $opt '': an empty list"                "$opt" ""
  expect 2 "collcheck: bad $opt ',': no [a-z]+ named, only commas"  "$opt" ,
  expect 2 "collcheck: bad $opt ',,,': no [a-z]+ named, only commas"  "$opt" ,,,
done
# --results: a file that holds something is refused before any case runs, untouched
OUTD=$(mktemp -d /tmp/collkit_check_out.XXXXXX)
echo "my results" > "$OUTD/mine.txt"
expect 2 "collcheck: --results $OUTD/mine.txt exists \(11 bytes\): not written over .*--overwrite" --algo ring --count 4 --results "$OUTD/mine.txt"
expect 2 "collcheck: --results $OUTD is a directory"  --algo ring --count 4 --results "$OUTD"
[ "$(cat "$OUTD/mine.txt")" = "my results" ] || { echo "FAIL: the user's file was changed"; expect_fails=$((expect_fails + 1)); }
expect 0 "1 passed, 0 failed" --algo ring --count 4 --dtype i32 --op sum --inplace 0 --misaligned 0 --repeat 1 --results "$OUTD/mine.txt" --overwrite
grep -q "^collkit-results" "$OUTD/mine.txt" || { echo "FAIL: --overwrite did not write the results"; expect_fails=$((expect_fails + 1)); }
rm -rf "$OUTD"
# A count no machine here has the memory for: refused with the figures, never an OOM kill
expect 2 "collcheck: not enough memory for the largest case \(137438953472 B\): about 1.0[0-9]*e\+03 GiB per rank" \
       --algo ring --count 16G --dtype f64 --op sum --inplace 0 --misaligned 0
expect 2 "bad --dtype 'f32,f16': unknown type 'f16'"            --dtype f32,f16
expect 2 "bad --op 'mean': unknown op \(want"                   --op mean
expect 2 "no case to run: --inputs random checks f32, f64 and bf16 only, and --dtype 'i32,i64' selects none"  --inputs random --dtype i32,i64
expect 2 "no case to run: --inputs random checks sum and avg only, and --op 'prod,max' selects neither"  --inputs random --op prod,max
expect 2 "no case to run: --inputs random has no misaligned cases"  --inputs random --misaligned only
for v in "" -1 x 1e3 18446744073709551616; do
  expect 2 "collcheck: bad --seed '$v' \(want an integer from 0 to 2\^64-1\)" --seed "$v"
done
expect 2 "collcheck: bad --seed '.3'"                        --seed +3
expect 2 "collcheck: bad --results '': want a file name"        --results ""
# What still works: the same options, well formed.
expect 0 "^ring "                                             --dtype f32,,i32 --op ,sum --timeout 2.5 --algo list
# A verdict that cannot be written is a failure (a full disk, a closed pipe).
expect_run 1 "collcheck: cannot write standard output: No space left on device" \
  bash -c '"$0" --algo list > /dev/full' "$C"
# collverify: its own options, and the tool's parser for the rest.
V=$(dirname "$C")/collverify
expect_run 2 "collverify: --np and --results are required"       "$V" --algo ring
expect_run 2 "collverify: bad --np '0'"                          "$V" --np 0 --results x
expect_run 2 "collverify: --traffic 'nosuch': no such library algorithm"  "$V" --np 2 --results x --traffic nosuch
expect_run 2 "collverify: --traffic 'rd': no such library algorithm \(--coll reduce_scatter\)"  "$V" --np 2 --results x --coll reduce_scatter --traffic rd
expect_run 2 "collverify: --traffic 'mpi': a reference algorithm has no traffic formula"  "$V" --np 2 --results x --traffic mpi
expect_run 2 "collcheck: bad --seed 'x'"                         "$V" --np 2 --results x --seed x
expect_run 1 "cannot read --results '/nonexistent/r.txt'"        "$V" --np 2 --results /nonexistent/r.txt --algo ring
expect_run 0 "usage: collverify --np P --results FILE"           "$V" --help
expect_summary
