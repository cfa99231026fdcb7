#!/bin/sh
# run_collcheck.sh PROBE COLLCHECK NP MPIRUN [mpirun args... -n NP]
# collcheck on every algorithm that takes device buffers, at NP ranks, of the
# collective COLL names (environment; default allreduce).
# Exit 77 (CTest: skipped) when there is no CUDA device, 1 when the probe
# finds a device that does not work (its message printed). With fewer GPUs than
# ranks, nccl is left out
# (NCCL < 2.30 refuses a shared GPU; test_gpu checks that refusal).
probe=$1; collcheck=$2; np=$3; shift 3
ndev=$("$probe" --probe); rc=$?
[ "$rc" -eq 0 ] || { echo "$ndev"; [ "$rc" -eq 77 ] && exit 77; exit 1; }
coll=${COLL:-allreduce}
algos=$("$collcheck" --coll "$coll" --algo list | awk -v skip="$([ "$ndev" -lt "$np" ] && echo nccl)" \
        'NR > 1 && $2 ~ /cuda/ && $1 != skip { printf "%s%s", sep, $1; sep = "," }')
[ -n "$algos" ] || { echo "FAIL: no algorithm takes device buffers"; exit 1; }
echo "collcheck --coll $coll --device cuda on $np ranks, $ndev GPU(s): $algos"
exec "$@" "$collcheck" --coll "$coll" --device cuda --algo "$algos" --quick
