#!/usr/bin/env bash
# report_input.sh BENCHREPORT — benchreport on a results folder whose files
# were truncated, hand-edited or replaced: each is refused with exit 1 and a
# message naming the file, the line and what was expected there, and no
# summary.md is written from it. The well-formed folder (and the same files
# with \r\n line ends) gives a summary. No MPI: the files are written here.
set -u
B=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collkit-report-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

HDR=algo,p,bytes,count,dtype,op,place,iters,time_us,min_us,max_us,algbw_gbs,busbw_gbs,wrong,model_us
good() {   # good DIR: a small well-formed folder (sim layout too)
  mkdir -p "$1"
  {
    echo "$HDR"
    for p in 2 4; do
      for a in ring mpi; do
        for b in 1024 65536; do
          echo "$a,$p,$b,$((b / 4)),f32,sum,out,10,12.500,11.000,14.000,0.0819,0.1229,0,13.100"
        done
      done
    done
  } > "$1/sweep.csv"
  printf 'alpha_us 2\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\nmemcpy_gbs 8\n' > "$1/params.txt"
  printf 'name crossbar\ndesc a test platform\nalpha_us 1\nbw_gbs 3.125\nspeed_gflops 10\n' > "$1/platform.txt"
  { echo "$HDR,platform"; echo "ring,4,1024,256,f32,sum,out,10,12.500,11.000,14.000,0.0819,0.1229,0,nan,fattree"; } \
    > "$1/topology.csv"
  printf 'algo,p,samples_per_s,efficiency,comm_fraction\nring,1,100.5,1.000,0.000\nring,2,190.0,0.945,0.100\n' \
    > "$1/trainer.csv"
  printf '%s\n' 'algo,p,samples_per_s,efficiency,comm_fraction,allreduce_bytes_per_step,gpu_setup' \
    'nccl,1,18300.5,1.000,0.000,0,1 rank(s) on 1 GPU(s)' 'ring,1,18300.5,1.000,0.000,0,1 rank(s) on 1 GPU(s)' \
    'ring,2,4500.2,0.123,0.550,33557008,time-shared: 2 ranks on 1 GPU(s)' > "$1/trainer_gpu.csv"
}
run() {   # run WANT_RC REGEX DIR [--sim]: benchreport on DIR
  local want=$1 re=$2 dir=$3; shift 3
  local out rc
  rm -f "$dir/summary.md"
  out=$(timeout 20 "$B" "$@" --dir "$dir" 2>&1); rc=$?
  if [ "$rc" != "$want" ] || ! grep -Eq -- "$re" <<<"$out" || { [ "$want" != 0 ] && [ -e "$dir/summary.md" ]; }; then
    echo "FAIL: ${label:-}: exit $rc (want $want), summary.md $([ -e "$dir/summary.md" ] && echo written || echo absent), output:"
    echo "$out" | sed 's/^/    /'
    fails=$((fails + 1))
  else
    echo "ok: ${label:-}"
  fi
}
case_() {   # case_ LABEL FILE SED-OR-CMD REGEX [--sim]: corrupt one file of a fresh good folder
  label=$1
  local file=$2 edit=$3 re=$4; shift 4
  local d=$tmp/c$((++n))
  good "$d"
  (cd "$d" && eval "$edit") || { echo "FAIL: $label: could not set up"; fails=$((fails + 1)); return; }
  run 1 "$re" "$d" "$@"
}
n=0

label="a well-formed folder"; good "$tmp/ok"; run 0 "" "$tmp/ok"
label="a well-formed folder, --sim"; run 0 "" "$tmp/ok" --sim
grep -q '| ring | 2 | 190.0 | 0.945 | 0.100 |' "$tmp/ok/summary.md" || { echo "FAIL: trainer table"; fails=$((fails + 1)); }
grep -q '^## Trainer on the GPU' "$tmp/ok/summary.md" &&
  grep -q '| ring | 2 | 4500.2 | 0.123 | 0.550 | 33557008 | time-shared: 2 ranks on 1 GPU(s) |' "$tmp/ok/summary.md" ||
  { echo "FAIL: the GPU trainer table"; fails=$((fails + 1)); }
cp "$tmp/ok/summary.md" "$tmp/summary.lf"
label="the same files with \\r\\n line ends and a byte-order mark"; good "$tmp/crlf"
for f in sweep.csv params.txt platform.txt topology.csv trainer.csv; do sed -i 's/$/\r/' "$tmp/crlf/$f"; done
sed -i '1s/^/\xEF\xBB\xBF/' "$tmp/crlf/sweep.csv"
run 0 "" "$tmp/crlf" --sim
cmp -s "$tmp/summary.lf" "$tmp/crlf/summary.md" || { echo "FAIL: \\r\\n gives another summary"; fails=$((fails + 1)); }
label="files joined with cat (the header again)"; good "$tmp/cat"
{ echo "$HDR"; echo "ring,8,1024,256,f32,sum,out,10,12.5,11,14,0.08,0.14,0,nan"; } >> "$tmp/cat/sweep.csv"
run 0 "" "$tmp/cat"
label="an empty topology.csv (no fat-tree results)"; good "$tmp/notopo"; : > "$tmp/notopo/topology.csv"
run 0 "" "$tmp/notopo" --sim
label="a trainer run that failed (NaN, as bench_trainer.sh writes it)"; good "$tmp/trnan"
echo "ring,4,NaN,0.000,NaN" >> "$tmp/trnan/trainer.csv"
run 0 "" "$tmp/trnan"
label="no params.txt: model sections skipped"; good "$tmp/nop"; rm "$tmp/nop/params.txt"
run 0 "params.txt: not there" "$tmp/nop"

S=sweep.csv
case_ "text in a numeric column"  $S "sed -i '3s/,12.500,/,fast,/' $S"  "sweep.csv:3: column time_us \(field 9\) 'fast': expected a number"
case_ "an empty field"            $S "sed -i '4s/,0\\.1229,/,,/' $S"   "sweep.csv:4: column busbw_gbs \(field 13\) '': expected a number, got an empty string"
case_ "a missing column"          $S "sed -i '5s/,f32,sum,/,f32,/' $S" "sweep.csv:5: 14 fields where the header has 15"
case_ "an extra column"           $S "sed -i '5s/\$/,7/' $S"           "sweep.csv:5: 16 fields where the header has 15"
case_ "a column missing from the header" $S "sed -i '1s/busbw_gbs/bus_bw/' $S" "sweep.csv:1: header: no column 'busbw_gbs'"
case_ "a header column named twice" $S "sed -i '1s/count/bytes/' $S" "sweep.csv:1: header: column 'bytes' appears twice"
case_ "nan as a time"             $S "sed -i '2s/,12.500,/,nan,/' $S"  "sweep.csv:2: column time_us .*'nan': not a finite number"
case_ "inf as a bandwidth"        $S "sed -i '2s/,0.1229,/,inf,/' $S"  "sweep.csv:2: column busbw_gbs .*'inf': not a finite number"
case_ "a negative size"           $S "sed -i '2s/^ring,2,1024,/ring,2,-1024,/' $S" "sweep.csv:2: column bytes \(field 3\) '-1024': must be between 0"
case_ "a negative time"           $S "sed -i '2s/,12.500,/,-12.5,/' $S" "sweep.csv:2: column time_us .*must be at least 0"
case_ "p of 0"                    $S "sed -i '2s/^ring,2,/ring,0,/' $S" "sweep.csv:2: column p \(field 2\) '0': must be between 1"
case_ "a size with junk after it" $S "sed -i '2s/^ring,2,1024,/ring,2,1024x,/' $S" "sweep.csv:2: column bytes .*'1024x': expected an integer"
case_ "a place that is neither"   $S "sed -i '2s/,out,/,both,/' $S"    "sweep.csv:2: column place \(field 7\) 'both': expected in or out"
case_ "an empty algorithm name"   $S "sed -i '2s/^ring,/,/' $S"        "sweep.csv:2: column algo \(field 1\) '': empty"
case_ "an algorithm name too long" $S "sed -i '2s/^ring,/ring_with_a_name_far_too_long_to_keep,/' $S" "sweep.csv:2: column algo .*longer than 31 characters"
case_ "a quoted field"            $S "sed -i '2s/^ring,/\"ring\",/' $S" "sweep.csv:2: column algo .*a name is letters"
case_ "a duplicate row"           $S "sed -n 3p $S >> $S"              "sweep.csv:10: a second row for ring, p = 2, 65536 bytes, out-of-place \(the first is line 3\)"
case_ "a header and no rows"      $S "sed -i '2,\$d' $S"              "no results in .*sweep.csv \(a header and no rows\)"
case_ "an empty file"             $S ": > $S"                          "sweep.csv: empty file: expected a collbench CSV header"
case_ "no final line end (a truncated row)" $S "truncate -s -4 $S"    "sweep.csv:9: no line end: the file stops in the middle of this line"
case_ "a blank line"              $S "sed -i '4s/.*//' $S"             "sweep.csv:4: empty line"
case_ "a bare carriage return"    $S "sed -i '4s/,out,/,o\\rut,/' $S"  "sweep.csv:4: control character 0x0D at column"
case_ "a binary file"             $S "head -c 300 /bin/sh > $S"        "sweep.csv:1: (NUL byte|control character)"
case_ "a NUL byte in a row"       $S "printf 'ring,2,8,2,f32,sum,out,1,1\\0,1,1,1,1,0,1\\n' >> $S" "sweep.csv:10: NUL byte at column 27"
case_ "a directory"               $S "rm $S && mkdir $S"               "sweep.csv: not a regular file \(a directory\)"
case_ "a FIFO (no hang)"          $S "rm $S && mkfifo $S"              "sweep.csv: not a regular file \(a FIFO"
case_ "no sweep.csv"              $S "rm $S"                           "sweep.csv: cannot open: No such file"
if [ "$(id -u)" != 0 ]; then
  case_ "an unreadable file"      $S "chmod 000 $S"                    "sweep.csv: cannot open: Permission denied"
fi
case_ "model_us text"             $S "sed -i '2s/,13.100\$/,soon/' $S" "sweep.csv:2: column model_us \(field 15\) 'soon': expected a number.*\(or nan: no model\)"
case_ "wrong below -1"            $S "sed -i '2s/,0,13.100\$/,-2,13.100/' $S" "sweep.csv:2: column wrong \(field 14\) '-2': must be between -1"

P=platform.txt
case_ "platform: text for alpha"  $P "sed -i 's/^alpha_us 1/alpha_us one/' $P" "platform.txt:3: alpha_us 'one': expected a number" --sim
case_ "platform: alpha 0"         $P "sed -i 's/^alpha_us 1/alpha_us 0/' $P"   "platform.txt:3: alpha_us '0': must be above 0" --sim
case_ "platform: nan bandwidth"   $P "sed -i 's/^bw_gbs .*/bw_gbs nan/' $P"    "platform.txt:4: bw_gbs 'nan': not a finite number" --sim
case_ "platform: a key twice"     $P "echo 'bw_gbs 5' >> $P"                   "platform.txt:6: bw_gbs given twice \(first on line 4\)" --sim
case_ "platform: an unknown key"  $P "echo 'latency_us 5' >> $P"               "platform.txt:6: unknown key 'latency_us'" --sim
case_ "platform: a key missing"   $P "sed -i '/^speed_gflops/d' $P"            "platform.txt: no speed_gflops line" --sim
case_ "platform: a key alone"     $P "sed -i 's/^name .*/name/' $P"           "platform.txt:1: name has no value" --sim
case_ "platform: truncated"       $P "truncate -s -1 $P"                       "platform.txt:5: no line end" --sim
case_ "platform: missing"         $P "rm $P"                                   "platform.txt: cannot open" --sim
T=topology.csv
case_ "topology: no platform column" $T "sed -i '1s/,platform\$//; 2s/,fattree\$//' $T" "topology.csv:1: header: no column 'platform'" --sim
case_ "topology: a number cut off"   $T "sed -i '2s/,12.500,/,12.5.0,/' $T"  "topology.csv:2: column time_us .*'12.5.0': expected a number, not '.0' after it" --sim
R=trainer.csv
case_ "trainer: text for samples/s" $R "sed -i '3s/190.0/lots/' $R"         "trainer.csv:3: column samples_per_s \(field 3\) 'lots': expected a number"
case_ "trainer: a missing field"    $R "sed -i '3s/,0.100\$//' $R"          "trainer.csv:3: 4 fields where the header has 5"
case_ "trainer: a row twice"        $R "sed -n 3p $R >> $R"                 "trainer.csv:4: a second row for ring at p = 2 \(the first is line 3\)"
case_ "trainer: a '|' in a cell"    $R "sed -i '3s/^ring/ri|ng/' $R"        "trainer.csv:3: field 1 holds a '\|'"
case_ "trainer: a directory"        $R "rm $R && mkdir $R"                  "trainer.csv: not a regular file"
R=trainer_gpu.csv
case_ "GPU trainer: text for efficiency" $R "sed -i '4s/0.123/high/' $R"   "trainer_gpu.csv:4: column efficiency \(field 4\) 'high': expected a number"
case_ "GPU trainer: a row twice"    $R "sed -n 4p $R >> $R"                 "trainer_gpu.csv:5: a second row for ring at p = 2 \(the first is line 4\)"
M=params.txt
case_ "params: text for beta"       $M "sed -i 's/^beta_ns_per_byte .*/beta_ns_per_byte fast/' $M" "params.txt:2: beta_ns_per_byte 'fast': expected a number"
case_ "params: a key twice"         $M "echo 'alpha_us 3' >> $M"            "params.txt:5: alpha_us given twice \(first on line 1\)"
case_ "params: a FIFO (no hang)"    $M "rm $M && mkfifo $M"                 "params.txt: not a regular file"
case_ "params_shm: text"            params_shm.txt "printf 'alpha_us x\\n' > params_shm.txt" "params_shm.txt:1: alpha_us 'x': expected a number"

[ $fails = 0 ] && echo "all benchreport input checks passed" || echo "$fails benchreport input check(s) failed"
exit $((fails != 0))
