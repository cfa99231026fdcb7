#!/usr/bin/env bash
# report_trust.sh BENCHREPORT — benchreport says when a benchmark cannot be
# trusted, on fixed results folders (no MPI: the files are written here):
#   - an idle, clean run (load.txt idle, every point's repeats close): the
#     same verdicts as the same figures in the CSV of old (no quartiles, no
#     load.txt), each MET or MISSED;
#   - a noisy point (its quartiles far apart): "noisy" in the ratio table,
#     not ranked, and the target resting on it INCONCLUSIVE;
#   - a loaded machine (other work on the cores before the sweeps): every
#     target "inconclusive: the machine was loaded (load X on N cores)",
#     none MET or MISSED;
#   - the model's accuracy is information, never a verdict;
#   - a load.txt that is not what bench.sh writes is refused.
set -u
B=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collkit-trust-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

OLD=algo,p,bytes,count,dtype,op,place,iters,time_us,min_us,max_us,algbw_gbs,busbw_gbs,wrong,model_us
# folder DIR NEW NOISY: ring twice as fast as mpi from 64 KB up, rd slower; p = 2 and 4.
# NEW=1 adds the columns agree,q1_us,q3_us (quartiles 2 % around the median);
# NOISY=1 spreads ring's repeats at p = 2, 16 MB (its quartiles 50 % apart).
folder() {
  local d=$1 new=$2 noisy=$3 p a b t bus q1 q3
  mkdir -p "$d"
  { if [ "$new" = 1 ]; then echo "$OLD,agree,q1_us,q3_us"; else echo "$OLD"; fi
    for p in 2 4; do
      for a in ring rd mpi; do
        for b in 1024 4096 65536 16777216 67108864; do
          # time in us: mpi 1 + b/1000, ring half of it from 64 KB (and 0.9x below), rd 1.2x mpi
          t=$(awk -v a=$a -v b=$b 'BEGIN { m = 1 + b / 1000; printf "%.3f", a == "mpi" ? m : a == "rd" ? 1.2 * m : (b >= 65536 ? m / 2 : 0.9 * m) }')
          bus=$(awk -v b=$b -v t="$t" -v p=$p 'BEGIN { printf "%.4f", b / t / 1e3 * 2 * (p - 1) / p }')
          printf '%s,%d,%d,%d,f32,sum,out,20,%s,%s,%s,0.1,%s,0,%s' $a $p $b $((b / 4)) "$t" "$t" "$t" "$bus" "$t"
          if [ "$new" = 1 ]; then
            q1=$(awk -v t="$t" 'BEGIN { printf "%.3f", 0.99 * t }'); q3=$(awk -v t="$t" 'BEGIN { printf "%.3f", 1.01 * t }')
            if [ "$noisy" = 1 ] && [ $a = ring ] && [ $p = 2 ] && [ $b = 16777216 ]; then
              q1=$(awk -v t="$t" 'BEGIN { printf "%.3f", 0.8 * t }'); q3=$(awk -v t="$t" 'BEGIN { printf "%.3f", 1.3 * t }')
            fi
            printf ',on,%s,%s' "$q1" "$q3"
          fi
          echo
        done
      done
    done; } > "$d/sweep.csv"
  printf 'alpha_us 2\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\nmemcpy_gbs 8\n' > "$d/params.txt"
}
load() { printf 'cores 2\nbefore %s 0.50 0.40\nafter %s 3.00 2.00\nranks 4\n' "$2" "$3" > "$1/load.txt"; }
report() {   # report DIR: benchreport, exit 0 wanted
  local out
  out=$("$B" --dir "$1" 2>&1) || { fail "$1: benchreport failed: $out"; return 1; }
}
verdicts() { grep -E '^- \*\*(MET|MISSED|NOT MEASURED|INCONCLUSIVE)\*\*' "$1/summary.md"; }

# The idle, clean run and the same figures as an old CSV: the same verdicts.
folder "$tmp/old" 0 0; report "$tmp/old"
folder "$tmp/idle" 1 0; load "$tmp/idle" 0.20 4.10; report "$tmp/idle"
if [ "$(verdicts "$tmp/idle")" != "$(verdicts "$tmp/old")" ]; then
  fail "an idle clean run changed the verdicts:"; diff <(verdicts "$tmp/old") <(verdicts "$tmp/idle")
fi
[ "$(verdicts "$tmp/idle" | grep -c '^- \*\*MET\*\*')" -ge 3 ] || fail "idle: want MET verdicts: $(verdicts "$tmp/idle")"
grep -q INCONCLUSIVE "$tmp/idle/summary.md" && fail "idle: an inconclusive verdict: $(verdicts "$tmp/idle")"
grep -q 'noisy |' "$tmp/idle/summary.md" && fail "idle: a point marked noisy"
grep -q 'idle enough to judge' "$tmp/idle/summary.md" || fail "idle: the load is not said"
grep -q '0 of 30 points are noisy' "$tmp/idle/summary.md" || fail "idle: the noisy count"
grep -q 'all agreed on their arguments across ranks first (collbench --agree on)' "$tmp/idle/summary.md" ||
  fail "idle: the agreement is not said"

# One noisy point (ring, p = 2, 16 MB): marked in the table, not ranked, its target inconclusive.
folder "$tmp/noisy" 1 1; load "$tmp/noisy" 0.20 4.10; report "$tmp/noisy"
awk '/^### p = 2/ { on = 1 } /^### p = 4/ { on = 0 } on && /^\| ring \|/' "$tmp/noisy/summary.md" |
  grep -q '^| ring | 1.11 | 2.00 | - | noisy | 2.00 |$' ||
  fail "noisy: ring's p = 2 row: $(grep '^| ring |' "$tmp/noisy/summary.md" | head -1)"
grep -q '1 of 30 points are noisy' "$tmp/noisy/summary.md" || fail "noisy: the noisy count"
verdicts "$tmp/noisy" | grep -q '^- \*\*INCONCLUSIVE\*\* — best hand-written busbw >= 1.5x the reference at 16-64 MB' ||
  fail "noisy: the 16-64 MB target: $(verdicts "$tmp/noisy")"
grep -q 'inconclusive: the repeats of 1 point it rests on disagree' "$tmp/noisy/summary.md" ||
  fail "noisy: the reason is not given"
# the targets that do not rest on it are judged as before
verdicts "$tmp/noisy" | grep -q '^- \*\*MET\*\* — best hand-written latency' || fail "noisy: the latency target"
# the noisy point is not ranked: the best hand-written at p = 2, 16 MB is rd, the next
grep -q 'p=2 16 MB: ring' "$tmp/noisy/summary.md" && fail "noisy: ring ranked at p = 2, 16 MB"
grep -q 'p=2 16 MB: rd' "$tmp/noisy/summary.md" || fail "noisy: rd is not the best at p = 2, 16 MB"

# A loaded machine: every verdict inconclusive, with the load.
folder "$tmp/loaded" 1 0; load "$tmp/loaded" 2.50 6.30; report "$tmp/loaded"
[ "$(verdicts "$tmp/loaded" | grep -cE '^- \*\*(MET|MISSED)\*\*')" = 0 ] || fail "loaded: MET/MISSED printed: $(verdicts "$tmp/loaded")"
[ "$(grep -c 'inconclusive: the machine was loaded (load 2.5 on 2 cores)' "$tmp/loaded/summary.md")" -ge 4 ] ||
  fail "loaded: want every target inconclusive with the load: $(verdicts "$tmp/loaded")"
grep -q 'LOADED by other work' "$tmp/loaded/summary.md" || fail "loaded: not said at the top"
# the load after the sweeps, less their own ranks, counts too
folder "$tmp/after" 1 0; load "$tmp/after" 0.10 5.50; report "$tmp/after"
grep -q 'the machine was loaded (load 1.5 on 2 cores)' "$tmp/after/summary.md" || fail "after: the load after less the ranks"

# The model's accuracy: information, not a verdict.
for d in old idle loaded; do
  grep -q 'model within 25' <(verdicts "$tmp/$d") && fail "$d: the model check printed as a verdict"
  grep -q '^Information, not a target: the model within 25 %' "$tmp/$d/summary.md" || fail "$d: no model information"
done

# A load.txt that is not bench.sh's: refused with its file and line, no summary.
bad_load() {   # bad_load LABEL CONTENT REGEX
  folder "$tmp/bad" 1 0; printf "$2" > "$tmp/bad/load.txt"; rm -f "$tmp/bad/summary.md"
  local out rc
  out=$("$B" --dir "$tmp/bad" 2>&1); rc=$?
  [ $rc = 1 ] && grep -Eq -- "$3" <<<"$out" && [ ! -e "$tmp/bad/summary.md" ] || fail "load.txt $1: rc $rc: $out"
}
bad_load "unknown key" 'cores 2\nbefore 1 1 1\nload 3\nranks 2\n' 'load.txt:3: unknown key .load.'
bad_load "a word for a number" 'cores 2\nbefore 1 x 1\nranks 2\n' "load.txt:2: before 'x'"
bad_load "two numbers" 'cores 2\nbefore 1 1\nranks 2\n' 'load.txt:2: before: 2 numbers, expected 3'
bad_load "no cores" 'before 1 1 1\nranks 2\n' 'load.txt: no cores line'
bad_load "0 cores" 'cores 0\nbefore 1 1 1\nranks 2\n' 'load.txt:1: cores must be at least 1'

echo "$fails failed"
[ $fails = 0 ]
