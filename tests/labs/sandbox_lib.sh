# sandbox_lib.sh — sourced by the grader's sandboxed tests (batch.sh,
# batch_names.sh, batch_hostile.sh, sandbox.sh) after they set G and SRC:
# skipped (77) where bubblewrap cannot make its namespaces; a work folder T
# removed at exit; check COND WHY counting outcomes; SOL and SKEL, lab 01's
# reference solution and skeleton. batch_lab writes the batches' own lab into
# $T/lab: two rank counts of a short matrix and integrity, with the reference
# solution the batch grades first (the canary).
bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-net true 2>/dev/null ||
  { echo "SKIP: bubblewrap (bwrap) is missing or cannot make namespaces here"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
SOL=$SRC/labs/01-ring/solution/my_ring.c SKEL=$SRC/labs/01-ring/skeleton/my_ring.c
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
batch_lab() {
  mkdir -p "$T/lab/solution" "$T/subs"
  printf '%s\n' "file = my_ring.c" "algo = my_ring" \
    "part correctness 60 check np=1,2 args=--count+7+--dtype+i32+--op+sum" "part integrity 20 integrity" > "$T/lab/lab.conf"
  cp "$SOL" "$T/lab/solution/my_ring.c"
}
