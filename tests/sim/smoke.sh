#!/usr/bin/env bash
# smoke.sh SRC BUILD SMPI_BUILD — `make sim-bench` end to end at its smallest
# (SIM=smoke: p = 16, ring, rd and MPI_Allreduce, the ring reduce-scatter and
# all-gather, the fat trees, nodes of 8, the trainer at
# p = 1 and 2, replicated against --zero 1 and 2 at p = 2, the report and the plots), so that no step of the script rots
# unseen: it must exit 0 with every simulation's figures in the results, and
# refuse a results folder that already exists.
set -u
SRC=$1 BUILD=$2 SBUILD=$3
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

SIM=smoke SIM_OUT=$d/out SIM_BUILD=$SBUILD SIM_JOBS=2 "$SRC/scripts/sim-bench.sh" "$BUILD" > "$d/log" 2>&1
rc=$?
[ $rc = 0 ] && ok || { bad "sim-bench SIM=smoke exited $rc"; cat "$d/log"; }
[ ! -e "$d/out/failed.txt" ] && ok || { bad "simulations failed:"; cat "$d/out/failed.txt"; }
for a in ring rd mpi; do
  grep -q "^$a,16," "$d/out/sweep.csv" 2>/dev/null && ok || bad "no $a rows at p = 16 in sweep.csv"
done
for a in rs:ring ag:ring; do
  grep -q "^$a,16," "$d/out/colls.csv" 2>/dev/null && ok || bad "no $a rows at p = 16 in colls.csv"
done
grep -q '^## Reduce-scatter and all-gather' "$d/out/summary.md" 2>/dev/null && ok || bad "summary.md lacks the halves"
for a in ring rd; do
  grep -Eq "^$a,2,[0-9.]+,0\.[0-9]+," "$d/out/trainer.csv" 2>/dev/null && ok || bad "no $a row at p = 2 in trainer.csv"
done
# Sharded training: the three modes at p = 2; --zero 2 holds half the gradients.
awk -F, 'NR > 1 && $2 == 2 && NF == 9 { g[$1] = $7 } END { exit !(g["replicated"] > 0 && g["zero1"] == g["replicated"] &&
         g["zero2"] == 4 * int((g["zero1"] / 4 + 1) / 2)) }' "$d/out/zero.csv" 2>/dev/null && ok ||
  bad "zero.csv: want replicated, zero1 and zero2 rows at p = 2: $(cat "$d/out/zero.csv" 2>&1)"
grep -q '^## Sharded training' "$d/out/summary.md" 2>/dev/null && ok || bad "summary.md lacks the sharded training"
grep -q '^- \*\*PASS\*\* ping-pong recovers' "$d/out/summary.md" 2>/dev/null && ok || bad "summary.md lacks the ping-pong check"
grep -q 'alpha_us' "$d/out/params.txt" 2>/dev/null && ok || bad "no params.txt"
# Nodes of 8 (nodes8-16): both links recovered, ring and rd swept with the
# ranks told the node size, and the summary's table of flat against hier.
grep -q '^links 3$' "$d/out/params_nodes.txt" 2>/dev/null && ok || bad "params_nodes.txt lacks both links"
for a in ring rd; do
  grep -q "^$a,16,.*,nodes8-16$" "$d/out/nodes.csv" 2>/dev/null && ok || bad "no $a rows at p = 16 in nodes.csv"
done
grep -q 'steps between nodes priced with the link between nodes' "$d/out/node_p16_ring.txt" 2>/dev/null && ok ||
  bad "the node sweep's model does not know the nodes"
grep -q '^| 16 | 1 KB | rd |' "$d/out/summary.md" 2>/dev/null && ok || bad "summary.md lacks the nodes table"
# A folder that exists is never written over.
mkdir "$d/taken"
SIM=smoke SIM_OUT=$d/taken SIM_BUILD=$SBUILD "$SRC/scripts/sim-bench.sh" "$BUILD" > "$d/log2" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "SIM_OUT=$d/taken exists" "$d/log2" && ok || { bad "an existing SIM_OUT: exit $rc"; cat "$d/log2"; }
echo "$pass passed, $fail failed"
[ $fail = 0 ]
