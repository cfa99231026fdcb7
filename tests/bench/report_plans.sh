#!/usr/bin/env bash
# report_plans.sh BENCHREPORT — benchreport's section on the parallel plans
# (plans.csv, scripts/bench_plans.sh) from fixed files: the table printed
# right (bytes as MB, a failed run as "failed", the configuration in the
# heading, the note that memory is the lesson, the plans left out), and a
# malformed plans.csv refused with the file, the line and what is wrong, exit
# 1 and no summary.md. No MPI: the files are written here.
set -u
B=$1 fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collkit-plans-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

HDR=plan,p,tp,pp,dp,step_s,samples_per_s,param_bytes,grad_bytes,optim_state_bytes,activation_bytes,peak_rss_bytes,coll_bytes_per_step
good() {   # good DIR: a sweep of one row, and the plans as bench_plans.sh writes them
  mkdir -p "$1"
  printf '%s\n' "algo,p,bytes,count,dtype,op,place,iters,time_us,min_us,max_us,algbw_gbs,busbw_gbs,wrong,model_us" \
    "ring,2,1024,256,f32,sum,out,10,12.5,11,14,0.08,0.12,0,13.1" > "$1/sweep.csv"
  printf 'alpha_us 2\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\nmemcpy_gbs 8\n' > "$1/params.txt"
  printf '%s\n' "$HDR" \
    "dp,4,1,1,4,0.1988,160.166838,33557008,33557008,67114016,20736,189894656,33557008" \
    "zero2,4,1,1,4,0.3025,105.245276,33557008,8389252,16778504,20736,121303040,33557008" \
    "tp2xdp2,4,2,1,2,0.1348,236.211036,16778512,16778512,33557024,29184,164716544,16778767" \
    "pp2xdp2,4,1,2,2,NaN,NaN,NaN,NaN,NaN,NaN,NaN,NaN" > "$1/plans.csv"
  printf '%s\n' "the default model on the Made With ML data; p = 4 on 2 cores; 1 epoch(s)" \
    "tp2xpp2: refused by tagtrain (--pp does not take --tp yet)" > "$1/plans_setup.txt"
}
run() {   # run WANT_RC REGEX DIR: benchreport on DIR
  local want=$1 re=$2 dir=$3 out rc
  rm -f "$dir/summary.md"
  out=$(timeout 20 "$B" --dir "$dir" 2>&1); rc=$?
  if [ "$rc" != "$want" ] || ! grep -Eq -- "$re" <<<"$out" || { [ "$want" != 0 ] && [ -e "$dir/summary.md" ]; }; then
    fail "$label: exit $rc (want $want), summary.md $([ -e "$dir/summary.md" ] && echo written || echo absent), output:"
    echo "$out" | sed 's/^/    /'
  else
    echo "ok: $label"
  fi
}

label="a well-formed plans.csv"; good "$tmp/ok"; run 0 "" "$tmp/ok"
md=$tmp/ok/summary.md
want() { grep -qF -- "$1" "$md" && echo "ok: $2" || fail "$2: no line '$1' in the section:$(sed -n '/^## Parallel/,$p' "$md")"; }
want '## Parallel plans: memory and time per rank (DP, ZeRO-2, TP, PP)' "the heading"
want 'Configuration: the default model on the Made With ML data; p = 4 on 2 cores; 1 epoch(s) (scripts/bench_plans.sh; plans.csv).' "the configuration"
want '**The lesson is the memory**' "memory is the lesson"
want 'time-share' "the oversubscription note"
want '| plan | p = tp x pp x dp | step ms | samples/s | parameters MB | gradients MB | optimizer state MB | activations MB | peak RSS MB | collective MB/step |' "the table's header"
want '| dp | 4 = 1 x 1 x 4 | 198.8 | 160 | 33.56 | 33.56 | 67.11 | 0.021 | 189.89 | 33.56 |' "the dp row"
want '| zero2 | 4 = 1 x 1 x 4 | 302.5 | 105 | 33.56 | 8.39 | 16.78 | 0.021 | 121.30 | 33.56 |' "the zero2 row"
want '| tp2xdp2 | 4 = 2 x 1 x 2 | 134.8 | 236 | 16.78 | 16.78 | 33.56 | 0.029 | 164.72 | 16.78 |' "the tp row"
want '| pp2xdp2 | 4 = 1 x 2 x 2 | failed | failed | failed | failed | failed | failed | failed | failed |' "a failed run"
want 'No plan splits the model both ways (tp > 1 and pp > 1): tp2xpp2: refused by tagtrain (--pp does not take --tp yet)' "the hybrid left out"
[ "$(grep -c '^## Parallel plans' "$md")" = 1 ] && echo "ok: one section" || fail "the section twice"

label="a hybrid row: no note"; good "$tmp/hy"
echo "tp2xpp2,4,2,2,1,0.2,100,8,8,16,1,100,8" >> "$tmp/hy/plans.csv"
run 0 "" "$tmp/hy"
grep -qF '| tp2xpp2 | 4 = 2 x 2 x 1 |' "$tmp/hy/summary.md" && ! grep -q 'No plan splits' "$tmp/hy/summary.md" &&
  echo "ok: the hybrid's row" || fail "the hybrid's row, or a note beside it"
label="simulated (--sim): the same plan at two p, no resident memory"; good "$tmp/sim"
printf 'name crossbar\ndesc a test platform\nalpha_us 1\nbw_gbs 3.125\nspeed_gflops 10\n' > "$tmp/sim/platform.txt"
printf '%s\n' "$HDR" "dp,16,1,1,16,0.02,800,1000000,1000000,2000000,5000,NaN,1000000" \
  "dp,64,1,1,64,0.03,2100,1000000,1000000,2000000,5000,NaN,1000000" > "$tmp/sim/plans.csv"
"$B" --sim --dir "$tmp/sim" > "$tmp/simlog" 2>&1 && grep -qF '| dp | 64 = 1 x 1 x 64 | 30 | 2100 | 1.00 | 1.00 | 2.00 | 0.005 | n/a | 1.00 |' \
  "$tmp/sim/summary.md" && grep -qF 'Simulated: one rank per host' "$tmp/sim/summary.md" &&
  grep -qF '(scripts/sim-bench.sh; plans.csv)' "$tmp/sim/summary.md" && echo "ok: $label" ||
  fail "$label: $(cat "$tmp/simlog"; sed -n '/^## Parallel/,$p' "$tmp/sim/summary.md")"
label="no plans_setup.txt"; good "$tmp/nos"; rm "$tmp/nos/plans_setup.txt"
run 0 "" "$tmp/nos"
grep -qF 'Configuration: not recorded (no plans_setup.txt)' "$tmp/nos/summary.md" &&
  grep -qF 'No plan splits the model both ways (tp > 1 and pp > 1): none was run.' "$tmp/nos/summary.md" &&
  echo "ok: no configuration said" || fail "no plans_setup.txt: $(sed -n '/^## Parallel/,$p' "$tmp/nos/summary.md")"
label="no plans.csv: no section"; good "$tmp/none"; rm "$tmp/none/plans.csv"
run 0 "" "$tmp/none"
grep -q '^## Parallel plans' "$tmp/none/summary.md" && fail "a section without plans.csv" || echo "ok: no section"

n=0
case_() {   # case_ LABEL SED REGEX: one edit of a fresh good plans.csv, refused
  label=$1
  local d=$tmp/c$((++n))
  good "$d"
  sed -i "$2" "$d/plans.csv"
  run 1 "$3" "$d"
}
case_ "a column missing" '1s/,peak_rss_bytes//; s/,189894656//; s/,121303040//; s/,164716544//; s/,NaN,NaN$/,NaN/' \
  "plans.csv:1: header: no column 'peak_rss_bytes' \(scripts/bench_plans.sh writes plan,p,tp,pp,dp"
case_ "a truncated row" '3s/,33557008$//' "plans.csv:3: 12 fields where the header has 13"
case_ "a word for a number" '2s/,0.1988,/,fast,/' "plans.csv:2: column step_s \(field 6\) 'fast'"
case_ "a negative number" '4s/,16778512,16778512,/,-5,16778512,/' "plans.csv:4: column param_bytes \(field 8\) '-5'"
case_ "p not tp x pp x dp" '4s/^tp2xdp2,4,2,1,2,/tp2xdp2,4,2,1,4,/' "plans.csv:4: plan tp2xdp2: p = 4 is not tp x pp x dp = 2 x 1 x 4"
case_ "no ranks" '2s/^dp,4,1,1,4,/dp,4,0,1,4,/' "plans.csv:2: column tp \(field 3\) '0'"
case_ "a plan twice" '3s/^zero2,/dp,/' "plans.csv:3: a second row for plan dp at p = 4"
case_ "a plan with a space" '2s/^dp,/d p,/' "plans.csv:2: column plan \(field 1\) 'd p': a name is letters"
case_ "an empty file" 'd' "plans.csv: empty file: expected a header row \(plan,p,tp,pp,dp"
label="plans.csv a directory"; good "$tmp/dir"; rm "$tmp/dir/plans.csv"; mkdir "$tmp/dir/plans.csv"
run 1 "plans.csv: not a regular file" "$tmp/dir"

[ "$fails" = 0 ] && echo "report_plans: all passed" || { echo "report_plans: $fails failed"; exit 1; }
