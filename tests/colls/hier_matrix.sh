#!/bin/bash
# hier_matrix.sh quick|full COLLCHECK COLLVERIFY MPIRUN [MPIRUN FLAGS...]
# The hierarchical all-reduce through the checker at p = 1..6 on emulated
# nodes of k = 1, 2, 3 ranks (COLLKIT_RANKS_PER_NODE), on the mpi transport
# and on --transport shm (the mixed transport where the ranks span nodes).
# full: every k that divides p, on both (22 runs); quick (make test; a
# launch costs about a second here): ten of them, every p, every k, both
# transports, one node, one rank a node and several of each. Each run must
# pass every case, and the p=6 k=3 shm run's results file must pass
# collverify too (the counts recomputed outside the job). Counts 0, below p,
# odd and a thousand; in place and out of place.
set -u
mode=$1 C=$2 V=$3; shift 3
launcher=("$@")
export COLLKIT_TIMEOUT=${COLLKIT_TIMEOUT:-30}
args=(--algo hier,hier.ring.rd,hier.halving-rd.rabenseifner --count 0,1,5,1021 --dtype f64,i32 --op sum,max
      --inplace both)
fail=0 runs=0
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
f=$d/results
for p in 1 2 3 4 5 6; do
    for k in 1 2 3; do
        [ $((p % k)) = 0 ] || continue
        for t in mpi shm; do
            if [ "$mode" = quick ]; then
                case "$t p=$p k=$k" in
                "mpi p=1 k=1"|"mpi p=2 k=2"|"mpi p=3 k=3"|"mpi p=4 k=2"|"mpi p=5 k=1"|"mpi p=6 k=3") ;;
                "shm p=2 k=1"|"shm p=4 k=2"|"shm p=6 k=2"|"shm p=6 k=3") ;;
                *) continue ;;
                esac
            fi
            runs=$((runs + 1))
            rm -f "$f"
            COLLKIT_RANKS_PER_NODE=$k "${launcher[@]}" -x COLLKIT_RANKS_PER_NODE -np "$p" "$C" "${args[@]}" \
                --transport "$t" --results "$f" > "$d/out" 2>&1
            rc=$?
            last=$(tail -n 1 "$d/out")
            if [ $rc != 0 ] || ! [[ $last =~ ^[1-9][0-9]*\ passed,\ 0\ failed$ ]]; then
                echo "FAIL p=$p k=$k --transport $t (status $rc):"; grep -v PASS "$d/out" | head -20; fail=1
            else
                echo "p=$p k=$k $t: $last"
            fi
            # The mixed transport's run, verified outside the job.
            if [ $p = 6 ] && [ $k = 3 ] && [ $t = shm ] && [ $rc = 0 ]; then
                grep -q "mixed transport" "$d/out" || { echo "FAIL: p=6 k=3 shm did not run on the mixed transport"; fail=1; }
                COLLKIT_RANKS_PER_NODE=$k "$V" --np "$p" --results "$f" "${args[@]}" > "$d/out" 2>&1 \
                    || { echo "FAIL: collverify at p=6 k=3:"; cat "$d/out"; fail=1; }
                echo "collverify p=6 k=3: $(tail -n 1 "$d/out")"
            fi
        done
    done
done
want=22; [ "$mode" = quick ] && want=10
[ $runs = $want ] || { echo "FAIL: $runs runs, want $want"; fail=1; }
[ $fail = 0 ] && echo "hier matrix: $runs runs passed"
exit $fail
