#!/bin/sh
# run_collcheck.sh PROBE COLLCHECK NP MPIRUN [mpirun args... -n NP]
# collcheck on every algorithm that takes device buffers, at NP ranks.
# Exit 77 (CTest: skipped) when there is no CUDA device, or when collcheck has
# no option for device buffers. With fewer GPUs than ranks, nccl is left out
# (NCCL < 2.30 refuses a shared GPU; test_gpu checks that refusal).
probe=$1; collcheck=$2; np=$3; shift 3
ndev=$("$probe" --probe) || { echo "$ndev"; exit 77; }
help=$("$collcheck" --help 2>&1)
case "$help" in
  *--device*)          memopt="--device cuda" ;;
  *"--mem host|cuda"*) memopt="--mem cuda" ;;
  *) echo "SKIP: collcheck has no option for device buffers (test_gpu covers the GPU algorithms)"; exit 77 ;;
esac
algos=$("$collcheck" --algo list | awk -v skip="$([ "$ndev" -lt "$np" ] && echo nccl)" \
        'NR > 1 && $2 ~ /cuda/ && $1 != skip { printf "%s%s", sep, $1; sep = "," }')
[ -n "$algos" ] || { echo "FAIL: no algorithm takes device buffers"; exit 1; }
echo "collcheck $memopt on $np ranks, $ndev GPU(s): $algos"
exec "$@" "$collcheck" $memopt --algo "$algos" --quick
