#!/usr/bin/env bash
# report_path.sh BENCHREPORT — benchreport's section on the trainer's own path
# (scripts/bench_trainer.sh's trainer_path.csv and trainer_ddp.txt), on fixed
# folders (no MPI):
#   - the breakdown table: each mode's forward+backward, wait, collective,
#     optimizer and step in ms, and DDP's side as trainer_ddp.txt says it;
#   - the acceptance line per mode, the trainer's calls as they ran against
#     collbench's time for the same calls: MET at 1.05x, MISSED at 1.30x and
#     at 0.80x, with the figures and the ratio;
#   - INCONCLUSIVE, not MET or MISSED, when the machine was loaded or the
#     trainer's collective's repeats disagree (quartiles far apart);
#   - a trainer_path.csv without a column, or with a negative time, refused.
set -u
B=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collkit-path-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
HDR=mode,algo,transport,p,bytes_per_step,calls,fb_s,wait_s,comm_s,calls_entry_s,calls_s,calls_q1_s,calls_q3_s,optimizer_s,step_s,collbench_s,collbench_q1_s,collbench_q3_s
# folder DIR [CALLS_Q3]: a one-row sweep, the trainer's path (the calls
# dense 1.05x, bucketed 1.30x, fast 0.80x collbench's) and DDP's note.
folder() {
  local d=$1 q3=${2:-0.00107}
  mkdir -p "$d"
  { echo algo,p,bytes,count,dtype,op,place,iters,time_us,min_us,max_us,algbw_gbs,busbw_gbs,wrong,model_us
    echo ring,2,1024,256,f32,sum,out,20,10,10,10,0.1,0.1,0,10; } > "$d/sweep.csv"
  { echo "$HDR"
    echo "dense,twoshot,shm,2,10000000,1,0.004,0.0002,0.00105,0.00001,0.00105,0.00104,$q3,0.0015,0.00676,0.001,0.00099,0.00101"
    echo "bucketed,twoshot,shm,2,10000000,3,0.004,0.0002,0.0004,0.0009,0.0013,0.00129,0.00131,0.0015,0.007,0.001,0.00099,0.00101"
    echo "fast,twoshot,shm,2,10000000,1,0.004,0.0002,0.0008,0.00001,0.0008,0.00079,0.00081,0.0015,0.007,0.001,0.00099,0.00101"
  } > "$d/trainer_path.csv"
  echo "not measured: no PyTorch" > "$d/trainer_ddp.txt"
}
report() { "$B" --dir "$1" > "$1.out" 2>&1; }
verdict() { grep -A1 -E "^- \*\*[A-Z ]+\*\* — the trainer's collective per step .*\($2, p = 2\)" "$1/summary.md"; }

folder "$tmp/idle"
printf 'cores 2\nbefore 0.20 0.20 0.20\nafter 2.10 1.00 0.50\nranks 2\n' > "$tmp/idle/load.txt"
report "$tmp/idle" || fail "idle: benchreport failed: $(cat "$tmp/idle.out")"
S=$tmp/idle/summary.md
grep -q "^## The trainer's own path (tagtrain --breakdown)" "$S" || fail "no section"
grep -q '^| bucketed | twoshot@shm | 2 | 10.00 | 3 | 4.000 | 0.200 | 0.400 | 1.500 | 7.000 | 0.900 | 1.300 | 1.000 |$' "$S" ||
  fail "the bucketed row: $(grep '^| bucketed' "$S")"
grep -q 'DDP: not measured: no PyTorch\.' "$S" || fail "DDP's side is not said"
verdict "$tmp/idle" dense | grep -q '^- \*\*MET\*\*' || fail "dense at 1.05x: $(verdict "$tmp/idle" dense)"
verdict "$tmp/idle" dense | grep -q '1.050 ms against 1.000 ms (1 call of twoshot@shm, in place, agreement on): 1.05x' ||
  fail "dense's figures: $(verdict "$tmp/idle" dense)"
verdict "$tmp/idle" bucketed | grep -q '^- \*\*MISSED\*\*' || fail "bucketed at 1.30x: $(verdict "$tmp/idle" bucketed)"
verdict "$tmp/idle" bucketed | grep -q '1.300 ms against 1.000 ms (3 calls of twoshot@shm, in place, agreement on): 1.30x' ||
  fail "bucketed's figures: $(verdict "$tmp/idle" bucketed)"
# 0.80x is not within 10 % either: the trainer's figure and collbench's do not measure the same thing.
verdict "$tmp/idle" fast | grep -q '^- \*\*MISSED\*\*' || fail "fast at 0.80x: $(verdict "$tmp/idle" fast)"

# Loaded: both inconclusive.
folder "$tmp/loaded"
printf 'cores 2\nbefore 3.50 3.00 2.00\nafter 5.00 3.00 2.00\nranks 2\n' > "$tmp/loaded/load.txt"
report "$tmp/loaded" || fail "loaded: benchreport failed: $(cat "$tmp/loaded.out")"
for m in dense bucketed; do
  verdict "$tmp/loaded" $m | grep -q '^- \*\*INCONCLUSIVE\*\*.*' || fail "loaded, $m: $(verdict "$tmp/loaded" $m)"
  verdict "$tmp/loaded" $m | grep -q 'inconclusive: the machine was loaded' || fail "loaded, $m: no reason"
done

# The trainer's repeats far apart (dense's quartiles 1.04 and 1.6 ms): dense inconclusive, bucketed still judged.
folder "$tmp/noisy" 0.0016
printf 'cores 2\nbefore 0.20 0.20 0.20\nafter 2.10 1.00 0.50\nranks 2\n' > "$tmp/noisy/load.txt"
report "$tmp/noisy" || fail "noisy: benchreport failed: $(cat "$tmp/noisy.out")"
verdict "$tmp/noisy" dense | grep -q 'inconclusive: the repeats of 1 point it rests on disagree' ||
  fail "noisy dense: $(verdict "$tmp/noisy" dense)"
verdict "$tmp/noisy" bucketed | grep -q '^- \*\*MISSED\*\*' || fail "noisy: bucketed: $(verdict "$tmp/noisy" bucketed)"

# Refused: a column missing, a negative time.
folder "$tmp/nocol"
sed -i '1s/,collbench_s,/,collbench,/' "$tmp/nocol/trainer_path.csv"
report "$tmp/nocol" && fail "a trainer_path.csv without collbench_s was accepted"
grep -q "trainer_path.csv:1: header: no column 'collbench_s'" "$tmp/nocol.out" ||
  fail "no column: the message: $(cat "$tmp/nocol.out")"
folder "$tmp/neg"
sed -i '2s/,0.0015,/,-0.0015,/' "$tmp/neg/trainer_path.csv"
report "$tmp/neg" && fail "a negative optimizer time was accepted"
grep -q "trainer_path.csv:2: column optimizer_s" "$tmp/neg.out" || fail "negative: the message: $(cat "$tmp/neg.out")"

[ "$fails" = 0 ] && echo "report_path: all checks passed"
[ "$fails" = 0 ]
