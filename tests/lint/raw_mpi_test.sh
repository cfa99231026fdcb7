#!/bin/sh
# raw_mpi_test.sh SRC — no raw MPI collective in the kit outside
# collectives/ (raw_mpi.sh on the source tree), and the check is shown to
# work: a call planted in a temporary copy of a product file is caught at its
# line, in its nonblocking, persistent and profiling spellings too, while a
# mention in a comment or a string, MPI_Reduce_local, and the same calls
# under collectives/ and tests/ are not.
set -u
SRC=$1
CHECK=$(dirname "$0")/raw_mpi.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

# 1. The kit itself.
sh "$CHECK" "$SRC" > "$T/tree.out" 2>&1; rc=$?
check '[ $rc -eq 0 ]' "raw MPI collectives outside collectives/ (rc $rc):
$(cat "$T/tree.out")"

# 2. A planted call: a copy of plugin/main.c with a barrier at the top of main.
mkdir -p "$T/kit/plugin" "$T/kit/trainer" "$T/kit/collectives/src" "$T/kit/tests/unit"
sed '/^int main(/,/^{$/ s/^{$/{\n    MPI_Barrier(MPI_COMM_WORLD);/' "$SRC/plugin/main.c" > "$T/kit/plugin/main.c"
at=$(grep -n '^    MPI_Barrier(MPI_COMM_WORLD);$' "$T/kit/plugin/main.c" | cut -d: -f1)
check '[ -n "$at" ]' "plugin/main.c changed: no place to plant the barrier"
cat > "$T/kit/trainer/spellings.c" <<'C'
/* MPI_Allreduce in a comment is no call; nor is
   MPI_Bcast in a comment over two lines */
static const char *say = "a plain MPI_Barrier waits for ever";   // MPI_Gather
static void f(int *x)
{
    MPI_Reduce_local(x, x, 1, MPI_INT, MPI_SUM); MPI_Ibarrier_x(); my_MPI_Bcast(x);
    MPI_Iallreduce(MPI_IN_PLACE, x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, 0);
    PMPI_Allreduce_init(0, 0, 0, 0, 0, 0, 0, 0, 0); MPI_Reduce_scatter_block_c(0, 0, 0, 0, 0, 0);
    int (*g)() = (int (*)())MPI_Alltoallv; (void)g; (void)say;
}
C
echo 'static void h(void) { MPI_Barrier(MPI_COMM_WORLD); }' > "$T/kit/collectives/src/lib.c"
echo 'static void h(void) { MPI_Barrier(MPI_COMM_WORLD); }' > "$T/kit/tests/unit/t.c"
sh "$CHECK" "$T/kit" > "$T/plant.out" 2>&1; rc=$?
check '[ $rc -eq 1 ]' "the planted calls: exit $rc, not 1: $(cat "$T/plant.out")"
check 'grep -q "^plugin/main.c:$at: MPI_Barrier: MPI_Barrier(MPI_COMM_WORLD);$" "$T/plant.out"' \
      "the planted barrier is not named at plugin/main.c:$at: $(cat "$T/plant.out")"
for want in "trainer/spellings.c:7: MPI_Iallreduce" "trainer/spellings.c:8: PMPI_Allreduce_init" \
            "trainer/spellings.c:8: MPI_Reduce_scatter_block_c" "trainer/spellings.c:9: MPI_Alltoallv"; do
  check 'grep -q "^$want: " "$T/plant.out"' "not caught: $want: $(cat "$T/plant.out")"
done
check '[ "$(grep -c "^[a-z/]*\.c:" "$T/plant.out")" -eq 5 ]' "only the five calls are named (no comment, string, MPI_Reduce_local, collectives/ or tests/): $(cat "$T/plant.out")"
check 'tail -1 "$T/plant.out" | grep -q "5 raw MPI collective(s) outside collectives/: use the library.s bounded ones"' \
      "the closing line says what to do: $(tail -1 "$T/plant.out")"

# 3. The plant taken out again: clean.
rm "$T/kit/trainer/spellings.c"
cp "$SRC/plugin/main.c" "$T/kit/plugin/main.c"
sh "$CHECK" "$T/kit" > "$T/clean.out" 2>&1; rc=$?
check '[ $rc -eq 0 ] && grep -q "no raw MPI collective outside collectives/" "$T/clean.out"' "a clean copy: exit $rc: $(cat "$T/clean.out")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
