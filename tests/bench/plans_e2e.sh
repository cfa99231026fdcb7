#!/usr/bin/env bash
# plans_e2e.sh SRC BUILD — scripts/bench_plans.sh end to end on a tiny model
# (1024 features, 16 hidden units, one epoch, p = 4): it exits 0, plans.csv
# has the columns benchreport reads (benchreport prints its section from it,
# a row per plan), every figure is a number, and the memory goes the way
# each plan says (--tp 2 holds fewer parameters than the replicated run,
# --zero 2 fewer gradients and less optimizer state). A bad setting is
# refused before anything runs. No timing thresholds.
set -u
SRC=$1 BUILD=$2 pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# tagtrain trains on the real data: without it, skip (exit 77).
. "$(dirname "$0")/../lib/need_data.sh"
COLLKIT_SOURCE_DIR=${COLLKIT_SOURCE_DIR:-$SRC} skip_without_data
d=$(mktemp -d "${TMPDIR:-/tmp}/collkit-plans-e2e-XXXXXX")
trap 'rm -rf "$d"' EXIT

PLANS_EPOCHS=0 "$SRC/scripts/bench_plans.sh" "$BUILD" "$d/no" > "$d/log0" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "PLANS_EPOCHS='0': want a whole number" "$d/log0" && [ ! -e "$d/no" ] && ok ||
  bad "PLANS_EPOCHS=0: exit $rc (want 2, refused before anything is written): $(cat "$d/log0")"

o=$d/out
PLANS_FEATURES=1024 PLANS_HIDDEN=16 "$SRC/scripts/bench_plans.sh" "$BUILD" "$o" > "$d/log" 2>&1
rc=$?
[ $rc = 0 ] && ok || { bad "bench_plans.sh exited $rc"; cat "$d/log"; }
# Every figure a number (no NaN: no run failed), a row per plan.
awk -F, 'NR > 1 { for (i = 6; i <= NF; i++) if ($i !~ /^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$/) exit 1; n++ }
         END { exit !(n >= 4) }' "$o/plans.csv" 2>/dev/null && ok || bad "plans.csv: $(cat "$o/plans.csv" 2>&1)"
col() { awk -F, -v plan="$1" -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                                          $1 == plan { print $(c[name]) }' "$o/plans.csv"; }
awk -v tp="$(col tp2xdp2 param_bytes)" -v dp="$(col dp param_bytes)" 'BEGIN { exit !(tp > 0 && tp < dp) }' && ok ||
  bad "--tp 2 holds $(col tp2xdp2 param_bytes) B of parameters, the replicated run $(col dp param_bytes)"
awk -v z="$(col zero2 grad_bytes)" -v dp="$(col dp grad_bytes)" -v zs="$(col zero2 optim_state_bytes)" \
    -v ds="$(col dp optim_state_bytes)" 'BEGIN { exit !(z > 0 && z < dp && zs < ds) }' && ok ||
  bad "--zero 2 holds $(col zero2 grad_bytes) B of gradients, the replicated run $(col dp grad_bytes)"
grep -q "4 on" "$o/plans_setup.txt" 2>/dev/null && grep -q "1024 features" "$o/plans_setup.txt" && ok ||
  bad "plans_setup.txt: $(cat "$o/plans_setup.txt" 2>&1)"
# benchreport reads the columns the script writes: its section, a row per plan.
printf '%s\n' "algo,p,bytes,count,dtype,op,place,iters,time_us,min_us,max_us,algbw_gbs,busbw_gbs,wrong,model_us" \
  "ring,2,1024,256,f32,sum,out,10,12.5,11,14,0.08,0.12,0,13.1" > "$o/sweep.csv"
"$BUILD/bin/benchreport" --dir "$o" > "$d/rlog" 2>&1 && ok || bad "benchreport on the script's folder: $(cat "$d/rlog")"
for plan in dp zero2 tp2xdp2 pp2xdp2; do
  grep -Eq "^\| $plan \| 4 = [0-9] x [0-9] x [0-9] \| [0-9.]+ \| [0-9]+ \|" "$o/summary.md" 2>/dev/null && ok ||
    bad "no $plan row in the section: $(sed -n '/^## Parallel/,$p' "$o/summary.md" 2>&1)"
done

echo "plans_e2e: $pass passed, $fail failed"
[ $fail = 0 ]
