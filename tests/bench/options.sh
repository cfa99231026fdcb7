#!/usr/bin/env bash
# options.sh COLLBENCH — bad command lines get a clear message and exit 2,
# before MPI starts (so no mpirun is needed); --help and --algo list exit 0.
set -u
B=$1
fails=0
expect() {   # expect CODE REGEX ARGS...
  local code=$1 re=$2; shift 2
  local out rc
  out=$("$B" "$@" 2>&1); rc=$?
  if [ "$rc" != "$code" ] || ! grep -Eq -- "$re" <<<"$out"; then
    echo "FAIL: collbench $*: exit $rc (want $code), output:"; echo "$out" | sed 's/^/    /'
    fails=$((fails + 1))
  else
    echo "ok: collbench $* -> $code"
  fi
}
expect 2 "-b 1048576 is larger than -e 8"           -b 1M -e 8
expect 2 "unknown algorithm 'nosuch'"               --algo ring,nosuch
expect 2 "known algorithms:.* ring"                 --algo nosuch
expect 2 "--algo: empty algorithm list"             --algo ""
expect 2 "bad size suffix 'X'"                      -b 12X
expect 2 "-b '-8': a negative value is not allowed"  -b -8
expect 2 "-e '99999999999999999999': too large"      -e 99999999999999999999
expect 2 "-n '5x': expected an integer"             -n 5x
expect 0 "^ring "                                   --algo list -b 1KiB -e 1GB
expect 2 "-e 'lots': expected a number"            -e lots
expect 2 "-f '1': must be between 2"                -f 1
expect 2 "-n '0': must be between 1"                -n 0
expect 2 "-c '2': must be between 0 and 1"          -c 2
expect 2 "-w 'x': expected an integer"              -w x
expect 2 "unknown dtype"                            -d f16
expect 2 "unknown op"                               -o mean
expect 2 "avg is defined for floating types only"   -d i32 -o avg
expect 2 "--place 'sideways'"                       --place sideways
expect 2 "unexpected argument 'extra'"              extra
expect 2 "unknown option"                           --frobnicate
expect 2 "needs a value"                            -b
expect 2 "given twice"                              --algo ring,ring
expect 2 "cannot open model file"                   --model /nonexistent/params.txt
expect 2 "--extrapolate needs --model FILE"         --extrapolate
expect 2 "--device 'tpu'"                           --device tpu
expect 2 "--chunk must be at least 1 byte"          --chunk 0
expect 2 "--paired compares exactly two algorithms"  --paired --algo ring
expect 2 "--json works with the all-reduce sweep"   --paired --algo ring,naive --json x.json
expect 0 "usage: mpirun"                            --help
expect 0 "^ring "                                   --algo list
[ $fails = 0 ] && echo "all option checks passed" || echo "$fails option check(s) failed"
exit $((fails != 0))
