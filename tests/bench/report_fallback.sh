#!/usr/bin/env bash
# report_fallback.sh BENCHREPORT LABEL — make bench's labels where the shm
# transport fell back to MPI (a cluster, the ranks spanning nodes), on fixed
# files (no MPI):
#   - LABEL (scripts/bench_transport.sh label) names each row of a shm sweep
#     by the transport its collbench table says: NAME@shm where it ran on
#     shm, NAME@mpi where it fell back; a table that names none is refused;
#   - benchreport compares like with like: at p = 4, where the shm sweep fell
#     back, its rows count as MPI (the "best on shm" column empty, no
#     "shm / MPI" ratio), while at p = 2 the real shm rows fill it; the
#     memcpy target is judged from the real shm row of p = 2.
set -u
B=$1 LABEL=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collkit-fallback-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
HDR=algo,p,bytes,count,dtype,op,place,iters,time_us,min_us,max_us,algbw_gbs,busbw_gbs,wrong,model_us,agree,q1_us,q3_us
rows() {   # rows P ALGO SCALE: one row per size, time = SCALE * (1 + b/1000) us
  local b t bus
  for b in 1024 65536 16777216 67108864; do
    t=$(awk -v b="$b" -v s="$3" 'BEGIN { printf "%.3f", s * (1 + b / 1000) }')
    bus=$(awk -v b="$b" -v t="$t" -v p="$1" 'BEGIN { printf "%.4f", b / t / 1e3 * 2 * (p - 1) / p }')
    echo "$2,$1,$b,$((b / 4)),f32,sum,out,20,$t,$t,$t,0.1,$bus,0,$t,on,$t,$t"
  done
}
table() { echo "# collbench: allreduce, $1 ranks, transport $2, pipeline chunk 262144 B"; }

# The shm sweeps as collbench wrote them: p = 2 on shm, p = 4 fell back to mpi.
{ echo "$HDR"; rows 2 ring 0.3; rows 2 rd 0.4; } > "$tmp/shm2.csv"; table 2 shm > "$tmp/shm2.txt"
{ echo "$HDR"; rows 4 ring 0.9; rows 4 rd 0.8; } > "$tmp/shm4.csv"; table 4 mpi > "$tmp/shm4.txt"
"$LABEL" label "$tmp/shm2.txt" "$tmp/shm2.csv" 0 > "$tmp/l2" || fail "label p=2"
"$LABEL" label "$tmp/shm4.txt" "$tmp/shm4.csv" 0 > "$tmp/l4" || fail "label p=4"
[ "$(cut -d, -f1 "$tmp/l2" | sort -u | tr '\n' ' ')" = "rd@shm ring@shm " ] || fail "p=2 labels: $(cut -d, -f1 "$tmp/l2" | sort -u)"
[ "$(cut -d, -f1 "$tmp/l4" | sort -u | tr '\n' ' ')" = "rd@mpi ring@mpi " ] || fail "p=4 labels: $(cut -d, -f1 "$tmp/l4" | sort -u)"
echo "# not a table" > "$tmp/none.txt"
"$LABEL" label "$tmp/none.txt" "$tmp/shm4.csv" 0 > /dev/null 2>&1 && fail "a table without a transport was labelled"

# The folder: the MPI sweep (ring, rd, mpi at p = 2, 4), then the shm rows.
d=$tmp/run
mkdir -p "$d"
{ echo "$HDR"; for p in 2 4; do rows $p ring 0.6; rows $p rd 0.7; rows $p mpi 1; done; cat "$tmp/l2" "$tmp/l4"; } > "$d/sweep.csv"
printf 'alpha_us 2\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\nmemcpy_gbs 8\n' > "$d/params.txt"
out=$("$B" --dir "$d" 2>&1) || fail "benchreport: $out"
md=$d/summary.md
# The transports table, each line prefixed by its p: p = 2 has a shm column, p = 4 none.
tr=$(awk '/^## Transports/ { on = 1; next } /^## / { on = 0 } on && /^### p = / { p = $4 } on && /^\| / { print "p" p " " $0 }' "$md")
case $(grep '^p2 | 16 MB' <<< "$tr") in *"ring@shm 3.333 | 2.00"*) ;; *) fail "p=2: the shm column: $(grep '^p2 | 16 MB' <<< "$tr")" ;; esac
case $(grep '^p4 | 16 MB' <<< "$tr") in "p4 | 16 MB | "*" | - | - | "*) ;; *) fail "p=4 (shm fell back): want no shm figure and no ratio: $(grep '^p4 | 16 MB' <<< "$tr")" ;; esac
grep -q '^p4 .*@shm' <<< "$tr" && fail "p=4: a row named @shm"
grep -q 'NAME@mpi was asked for shm and ran on MPI' "$md" || fail "the transports section does not say what NAME@mpi is"
# The targets: the memcpy one from the real shm row of p = 2; the model's
# accuracy (MPI transport) counts the fallen-back rows as MPI.
grep -A1 'best shm all-reduce busbw at 64 MB, p = 2' "$md" | grep -q '^  ring@shm 3.33 GB/s' ||
  fail "memcpy target not from ring@shm: $(grep -A1 memcpy "$md")"
grep -q 'Information, not a target.*ring@mpi 3/3' "$md" || fail "the model's MPI points lack ring@mpi"
[ $fails = 0 ] && echo "fallback labels ok" || { echo "$fails failure(s)"; cat "$md"; }
exit $((fails != 0))
