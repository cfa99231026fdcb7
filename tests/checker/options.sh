#!/usr/bin/env bash
# options.sh COLLCHECK — bad command lines get a clear message naming the
# option and exit 2, before MPI starts (so no mpirun is needed): every
# numeric option against an empty value, NaN and inf (none of them may read
# as 0 or "off"), the list options against empty lists.
set -u
C=$1
fails=0
expect() {   # expect CODE REGEX ARGS...
  local code=$1 re=$2; shift 2
  local out rc
  out=$("$C" "$@" 2>&1); rc=$?
  if [ "$rc" != "$code" ] || ! grep -Eq -- "$re" <<<"$out"; then
    echo "FAIL: collcheck $*: exit $rc (want $code), output:"; echo "$out" | sed 's/^/    /'
    fails=$((fails + 1))
  else
    echo "ok: collcheck $* -> $code"
  fi
}
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
expect 2 "bad --dtype 'f32,f16': unknown type 'f16'"            --dtype f32,f16
expect 2 "bad --op 'mean': unknown op \(want"                   --op mean
expect 2 "no case to run: --inputs random checks f32, f64 and bf16 only, and --dtype 'i32,i64' selects none"  --inputs random --dtype i32,i64
expect 2 "no case to run: --inputs random checks sum and avg only, and --op 'prod,max' selects neither"  --inputs random --op prod,max
expect 2 "no case to run: --inputs random has no misaligned cases"  --inputs random --misaligned only
# What still works: the same options, well formed.
expect 0 "^ring "                                             --dtype f32,,i32 --op ,sum --timeout 2.5 --algo list
[ $fails = 0 ] && echo "all option checks passed" || echo "$fails option check(s) failed"
exit $((fails != 0))
