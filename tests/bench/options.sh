#!/usr/bin/env bash
# options.sh COLLBENCH [BENCHREPORT] — bad command lines get a clear message
# and exit 2, before MPI starts (so no mpirun is needed); --help and --algo
# list exit 0. With BENCHREPORT, its numeric options too.
set -u
B=$1
. "$(dirname "$0")/../lib/expect.sh"
expect() { local code=$1 re=$2; shift 2; expect_run "$code" "$re" "$B" "$@"; }   # expect CODE REGEX ARGS...
expect 2 "-b 1048576 is larger than -e 8"           -b 1M -e 8
expect 2 "--results works with --paired only"       --algo ring --results x.txt
expect 2 "--seed '-1': want an integer"             --paired --algo ring,naive --seed -1
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
# a model that is no file: named at once, never read without end nor waited on
MD=$(mktemp -d /tmp/collkit_bench_model.XXXXXX) && mkfifo "$MD/fifo"
expect 2 "model file '/dev/zero': a device, not a file" --extrapolate --model /dev/zero
expect 2 "fifo: needs alpha_us"                     --extrapolate --model "$MD/fifo"
expect 1 "cannot write .*fifo: a FIFO that no program reads" --algo ring -b 8 -e 8 -n 1 -w 0 --csv "$MD/fifo"
rm -rf "$MD"
expect 2 "--extrapolate needs --model FILE"         --extrapolate
expect 2 "--device 'tpu'"                           --device tpu
expect 2 "--chunk must be at least 1 byte"          --chunk 0
expect 2 "--time-budget '1e-400': too small"        --time-budget 1e-400   # not 0, which means no budget
expect 2 "--paired compares exactly two algorithms"  --paired --algo ring
expect 2 "--json works with the all-reduce sweep"   --paired --algo ring,naive --json x.json
# Output files: a file that holds something is the user's: refused before
# anything runs, unless --overwrite; an empty file and /dev/null are free.
OUTD=$(mktemp -d /tmp/collkit_bench_out.XXXXXX)
echo "my results" > "$OUTD/mine.csv"
: > "$OUTD/empty.csv"
for opt in --csv --json --save-model --trace; do
  expect 2 "$opt $OUTD/mine.csv exists \(11 bytes\): not written over" --algo ring $opt "$OUTD/mine.csv"
done
expect 2 "--results $OUTD/mine.csv exists \(11 bytes\): not written over" --paired --algo ring,naive --results "$OUTD/mine.csv"
expect 2 "--csv $OUTD is a directory"               --csv "$OUTD"
# an output that could not be written is said before the run, not after it (--json, --trace: at its end)
expect 2 "--json $OUTD/none/r.json: no folder $OUTD/none to write it in" --algo ring --json "$OUTD/none/r.json"
expect 2 "--trace '': no file named"                --algo ring --trace ""
# two outputs in one file: the first written would be lost under the second
expect 2 "--csv and --json name one file"           --algo ring --csv "$OUTD/new.csv" --json "$OUTD/../${OUTD##*/}/new.csv"
ln -s empty.csv "$OUTD/link.csv"
expect 2 "--csv and --trace name one file"          --algo ring --csv "$OUTD/empty.csv" --trace "$OUTD/link.csv"
[ ! -e "$OUTD/new.csv" ] || { echo "FAIL: a refused run wrote new.csv"; expect_fails=$((expect_fails + 1)); }
# (accepted: the run gets as far as the next check, which needs a model)
expect 2 "--extrapolate needs --model FILE"         --extrapolate --csv "$OUTD/empty.csv" --save-model /dev/null
expect 2 "--extrapolate needs --model FILE"         --extrapolate --csv "$OUTD/mine.csv" --overwrite
[ "$(cat "$OUTD/mine.csv")" = "my results" ] || { echo "FAIL: the user's file was changed"; expect_fails=$((expect_fails + 1)); }
rm -rf "$OUTD"
# A size no machine here has the memory for: refused with the figures, never an OOM kill
expect 2 "collbench: not enough memory for -e 1099511627776 B: about 6.1[0-9]*e\+03 GiB per rank" --algo ring -b 8 -e 1024G --model none
# Every numeric option: an empty value, NaN and inf are errors, never 0 or "off".
for opt in -b -e -f -n -w -c --pmax --trace-capacity --chunk --time-budget; do
  expect 2 "$opt '': expected (a number|an integer), got an empty string" "$opt" ""
  for v in nan inf; do expect 2 "$opt '$v': (not a finite number|expected)" "$opt" "$v"; done
done
expect 2 "--time-budget '-1': must be between 0 and 1e\+06"  --time-budget -1
expect 2 "--time-budget '0x10': expected a number, not 'x10' after it"  --time-budget 0x10
expect 0 "^ring "                                   --time-budget 2.5 --algo list
# A model file with a value that is not a finite number >= 0: the file, the
# line and the key, exit 2 (NaN and inf once left no fastest algorithm, and
# --extrapolate read algos[-1]).
model=$(mktemp)
trap 'rm -f "$model"' EXIT
for v in nan inf -inf 1e999 -1 0.1x; do
  printf 'alpha_us 2\nbeta_ns_per_byte %s\ngamma_ns_per_byte 0.05\n' "$v" > "$model"
  expect 2 "--model: $model:2: beta_ns_per_byte '$v': " --extrapolate --model "$model" --algo all
done
# A key given twice, a NUL byte, a folder: named, never the last value or a
# line cut at the NUL.
printf 'alpha_us 2\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\nalpha_us 3\n' > "$model"
expect 2 "--model: $model:4: alpha_us given twice \\(first on line 1\\)"  --extrapolate --model "$model"
printf 'alpha_us 2\0x\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\n' > "$model"
expect 2 "--model: $model:1: a NUL byte"                --extrapolate --model "$model"
expect 2 "--model: cannot open model file '/': a directory, not a file" --extrapolate --model /
printf 'alpha_us 2\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\n' > "$model"
expect 0 "p = +4: "                                 --extrapolate --model "$model" --algo all --pmax 4
expect 0 "p = +3: "                                 --extrapolate --model "$model" --algo all --pmax 4 --every-p
expect 2 "--every-p works with --extrapolate only"  --every-p
expect 0 "usage: mpirun"                            --help
# A table that cannot be written is a failure (a full disk, a closed pipe).
expect_run 1 "collbench: cannot write standard output: No space left on device" \
  bash -c '"$0" --algo list > /dev/full' "$B"
expect_run 1 "collbench: cannot write standard output: No space left on device" \
  bash -c '"$0" --extrapolate --model "$1" --algo all --pmax 4 > /dev/full' "$B" "$model"
expect 0 "^ring "                                   --algo list
if [ $# -ge 2 ]; then
  B=$2   # benchreport: a number with junk after it is not the number
  expect 2 "--check-p '5x': expected an integer, not 'x' after it"  --dir /nonexistent --check-p 5x
  expect 2 "--check-p '': expected an integer, got an empty string"  --dir /nonexistent --check-p ""
  expect 2 "--check-p '0': must be between 1"                      --dir /nonexistent --check-p 0
  for v in inf:rd nan:rd 0x10:rd K:rd -1K:rd; do
    expect 2 "--fastest and --near-link take SIZE:ALGO"            --sim --dir /nonexistent --fastest "$v"
  done
  expect 1 "/nonexistent/sweep.csv: cannot open: "                 --sim --dir /nonexistent --fastest 1.5K:rd --check-p 16
  # a check of no algorithm (it would pass on nothing), of a misspelt one, or outside --sim
  expect 2 "--model-algos: ',': an empty name in the list"         --sim --dir /nonexistent --model-algos ,
  expect 2 "--near-link: 'ring,,rd': an empty name"                --sim --dir /nonexistent --near-link 16M:ring,,rd
  expect 2 "--model-algos: 'ring,rign': no algorithm 'rign'"       --sim --dir /nonexistent --model-algos ring,rign
  expect 2 "--fastest: 'rd,ring': one algorithm only"              --sim --dir /nonexistent --fastest 1K:rd,ring
  expect 2 "are checks of a --sim report"                          --dir /nonexistent --model-algos ring
  expect 2 "--dir '': no folder named"                             --dir ""
fi
expect_summary
