#!/usr/bin/env bash
# gantt.sh COLLDRAW COLLBENCH MPIRUN [FLAGS...] — a pipelined ring traced by collbench on
# 3 ranks (small chunks: several in flight) drawn as a Gantt timeline: one bar per event
# of the call, a row group per rank, a lane per peer and direction, the size in KiB, a legend
# of the kinds drawn; a file that is no
# collbench trace, and a call the trace does not hold, are refused with exit 2.
set -u
D=$1 CB=$2; shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
COLLKIT_CHUNK=1024 "$@" -np 3 "$CB" --algo ring_pipelined -b 12K -e 12K -n 1 -w 0 -c 0 --model none \
  --trace "$dir/t.json" > "$dir/cb.log" 2>&1 || { cat "$dir/cb.log"; fail "collbench --trace"; }
"$D" --gantt "$dir/t.json" --out "$dir/g" || fail "colldraw --gantt: exit $?"
svg=$dir/g/gantt.svg
want=$(grep '"ph":"X"' "$dir/t.json" | grep -c '"call":0}')
got=$(grep -o 'class="ev"' "$svg" | wc -l)
[ "$want" -gt 0 ] && [ "$got" = "$want" ] || fail "$got bars for $want events of call 0"
[ "$(grep -o '>rank [0-9]*</text>' "$svg" | sort -u | wc -l)" = 3 ] || fail "not one row group per rank"
grep -q '>send to 1 (2)<' "$svg" || fail "no second lane for chunks in flight to one peer"
# collbench's sizes count in powers of 1024: the title says KiB
grep -q '>allreduce ring_pipelined 12 KiB' "$svg" || fail "the title does not give the size in KiB: $(grep -o '<text[^>]*bold[^>]*>[^<]*' "$svg" | head -1)"
# the legend names the kinds the call has, and no other
for k in send recv reduce copy wait; do
  has=$(grep '"ph":"X"' "$dir/t.json" | grep '"call":0}' | grep -c "\"cat\":\"$k\"")
  shown=$(grep -c ">$k</text>" "$svg")
  { [ "$has" -gt 0 ] && [ "$shown" = 1 ]; } || { [ "$has" = 0 ] && [ "$shown" = 0 ]; } ||
    fail "legend: $k in $has events, shown $shown times"
done
echo "ok: $got bars, 3 ranks, lanes per chunk in flight"
out=$("$D" --gantt /dev/null 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "not a collbench or tagtrain trace" || fail "a file that is no trace: exit $rc: $out"
out=$("$D" --gantt "$dir/t.json" --call 7 --out "$dir/g" --overwrite 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no events of call 7" || fail "a call not in the trace: exit $rc: $out"
# forged or damaged events: refused with their line, never drawn at NaN or at a rank no row has
forge() {   # forge SED_EXPR REGEX
  sed "$1" "$dir/t.json" > "$dir/f.json"
  out=$("$D" --gantt "$dir/f.json" --out "$dir/f" 2>&1); rc=$?
  [ $rc = 2 ] && echo "$out" | grep -Eq "$2" && [ ! -e "$dir/f" ] || fail "forged trace ($1): exit $rc: $out"
}
forge 's/"ts":[0-9.]*/"ts":nan/' "line [0-9]+: not an event as collbench writes it"
forge 's/"dur":[0-9.]*/"dur":inf/' "line [0-9]+: not an event as collbench writes it"
forge 's/"pid":[0-9]*/"pid":2147483648/' "line [0-9]+: a thread name without its name, or a pid or tid"
forge 's/"call":[0-9]*/"call":0.5/' "line [0-9]+: not an event"
forge '/thread_name/d' "an event of rank [0-9]+, lane [0-9]+ has no thread name"
echo "ok: forged events refused"
echo PASS
