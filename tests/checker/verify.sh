#!/bin/bash
# A verdict the checked program cannot write: collcheck --results and
# collbench --paired --results, checked by collverify, on honest algorithms
# and on the cheats of cheats.c. Each check here is seen failing on a cheat
# or on a file broken on purpose, and passing on the honest run.
# usage: verify.sh CHEATS COLLCHECK COLLVERIFY MPIRUN [MPIRUN FLAGS...]
set -u
CHEATS=$1 CHECK=$2 VERIFY=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# expect STATUS REGEX FILE: the last command's status and a line of its output
expect() { [ "$rc" = "$1" ] || { cat "$3"; fail "status $rc, expected $1 ($4)"; }
           grep -Eq -- "$2" "$3" || { cat "$3"; fail "no '$2' ($4)"; }; }

CASE=(--count 0,1,p+1,100 --dtype f32,i64 --op sum,max --seed 4242)

# 1. An honest run and its file: every case verified.
"$@" -np 3 "$CHECK" --algo ring "${CASE[@]}" --results "$dir/r.txt" > "$dir/o" 2>&1; rc=$?
expect 0 '^46 passed, 0 failed$' "$dir/o" "honest collcheck"
"$VERIFY" --np 3 --results "$dir/r.txt" --algo ring "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
expect 0 '^46 passed, 0 failed$' "$dir/v" "honest file"
# ... the same file with \r\n line ends and a byte-order mark (an editor, a
# checkout): the same verdict, not "called allreduce, expected allreduce",
{ printf '\xEF\xBB\xBF'; sed 's/$/\r/' "$dir/r.txt"; } > "$dir/crlf.txt"
"$VERIFY" --np 3 --results "$dir/crlf.txt" --algo ring "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
expect 0 '^46 passed, 0 failed$' "$dir/v" "\\r\\n line ends"
# no results file but a folder, an endless device, a FIFO nothing writes to:
# each named for what it is, at once (not read without end, not waited on),
mkfifo "$dir/fifo"
for bad in "$dir:a directory" "/dev/zero:a device, not a file" "$dir/fifo:does not start with a 'collkit-results 1' header"; do
  timeout 20 "$VERIFY" --np 3 --results "${bad%%:*}" --algo ring "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
  expect 1 "${bad#*:}" "$dir/v" "--results ${bad%%:*}"
done
# ... and a --results FIFO that nothing reads is refused, not waited on by every rank.
timeout 60 "$@" -np 2 "$CHECK" --algo ring --count 1 --dtype i32 --op sum --results "$dir/fifo" > "$dir/o" 2>&1; rc=$?
expect 2 "cannot write --results '.*fifo': a FIFO that no program reads" "$dir/o" "--results FIFO"
# ... checked against the options given to collverify, not the file's: another seed,
"$VERIFY" --np 3 --results "$dir/r.txt" --algo ring "${CASE[@]}" --seed 1 > "$dir/v" 2>&1; rc=$?
expect 1 'it had p = 3, seed 4242.*expected p = 3, seed 1' "$dir/v" "another seed"
# a header whose call count is not the options' (repeat),
sed '1s/ repeat=2/ repeat=5/' "$dir/r.txt" > "$dir/bad.txt"
"$VERIFY" --np 3 --results "$dir/bad.txt" --algo ring "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
expect 1 'the header says repeat=5; the options make 2 calls per case' "$dir/v" "header repeat"
# a digest changed, a record missing, a record twice,
awk '/^call ring 3 1 2 / { sub(/digest=[0-9a-f]/, "digest=f") } { print }' "$dir/r.txt" > "$dir/bad.txt"
"$VERIFY" --np 3 --results "$dir/bad.txt" --algo ring "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
expect 1 'FAIL  call 2 of 2: rank 2: its result is not the expected one' "$dir/v" "changed digest"
grep -v '^call ring 5 0 1 ' "$dir/r.txt" > "$dir/bad.txt"
"$VERIFY" --np 3 --results "$dir/bad.txt" --algo ring "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
expect 1 'FAIL  call 1 of 2: rank 1: no record of this call' "$dir/v" "missing record"
expect 1 '^45 passed, 1 failed$' "$dir/v" "missing record"
{ cat "$dir/r.txt"; grep '^call ring 7 1 0 ' "$dir/r.txt"; } > "$dir/bad.txt"
"$VERIFY" --np 3 --results "$dir/bad.txt" --algo ring "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
expect 1 'rank 0: 2 records of this call' "$dir/v" "duplicated record"
# random floats recorded with their digests consistently, but those of the
# case's other call (other inputs): outside the rounding bound,
awk '$1 == "call" && $3 == 42 && $4 == 1 { d[$5] = $0; sub(/.* digest=/, "", d[$5]); sub(/ .*/, "", d[$5]) }
     $1 == "values" && $3 == 42 && $4 == 1 { v = $5 }
     { a[NR] = $0 } END { for (i = 1; i <= NR; i++) { $0 = a[i]
       if ($1 == "call" && $3 == 42 && $4 == 0) sub(/digest=[0-9a-f]+/, "digest=" d[$5])
       if ($1 == "values" && $3 == 42 && $4 == 0) $5 = v
       print } }' "$dir/r.txt" > "$dir/bad.txt"
"$VERIFY" --np 3 --results "$dir/bad.txt" --algo ring "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
expect 1 'ring n=4 f32 sum out-of-place random  FAIL  call 1 of 2: rank 0: [1-4] of 4 elements outside the rounding bound' "$dir/v" "random values"
# and traffic against a formula collverify trusts (rd's is not the ring's).
"$VERIFY" --np 3 --results "$dir/r.txt" --algo ring "${CASE[@]}" --traffic rd > "$dir/v" 2>&1; rc=$?
expect 0 '^46 passed, 0 failed$' "$dir/v" "--traffic of a library algorithm is ignored for a library algorithm"
sed -E 's/^(call|values) ring /\1 my_ring /' "$dir/r.txt" > "$dir/mine.txt"
"$VERIFY" --np 3 --results "$dir/mine.txt" --algo my_ring "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
expect 0 '^46 passed, 0 failed$' "$dir/v" "an unknown algorithm against its declared formulas"
"$VERIFY" --np 3 --results "$dir/mine.txt" --algo my_ring "${CASE[@]}" --traffic rd > "$dir/v" 2>&1; rc=$?
expect 1 'traffic: rank [0-9] sent [0-9]+ B, rd says [0-9]+ B' "$dir/v" "--traffic rd"

# 2. A program that does nothing and prints a passing closing line: its own
#    output ends "passing", the verdict does not.
"$@" -np 3 "$CHEATS" check --algo cheat_forge "${CASE[@]}" --results "$dir/f.txt" > "$dir/o" 2>&1
[ "$(tail -n 1 "$dir/o")" != "" ] && grep -q '^1000 passed, 0 failed$' "$dir/o" || { cat "$dir/o"; fail "the forged line"; }
"$VERIFY" --np 3 --results "$dir/f.txt" --algo cheat_forge "${CASE[@]}" > "$dir/v" 2>&1; rc=$?
expect 1 '^[0-9]+ passed, [1-9][0-9]* failed$' "$dir/v" "forged closing line"

# 3. Traffic "taken back" with ck_count_traffic: the transport's count stands.
"$@" -np 3 "$CHEATS" check --algo cheat_wrap --count 100 --dtype i64 --op sum --inplace 0 --misaligned 0 \
    --inputs exact --results "$dir/w.txt" > "$dir/o" 2>&1; rc=$?
expect 1 'FAIL  traffic: rank [0-9] sent 18446744073709551615 B' "$dir/o" "ck_count_traffic cannot lower the count"
expect 1 'counted by the algorithm itself' "$dir/o" "self-counted traffic named"
"$VERIFY" --np 3 --results "$dir/w.txt" --algo cheat_wrap --count 100 --dtype i64 --op sum --inplace 0 \
    --misaligned 0 --inputs exact > "$dir/v" 2>&1; rc=$?
expect 1 'counted by the algorithm itself \(ck_count_traffic\), not by the transport: not accepted here' "$dir/v" "self traffic"

# 4. One message per block padded with empty ones up to ring_pipelined's count.
"$@" -np 3 "$CHEATS" check --algo cheat_pad --count 1021 --dtype f32 --op sum --inplace 0 --misaligned 0 \
    --inputs exact --chunk 64 --results "$dir/p.txt" > "$dir/o" 2>&1; rc=$?
expect 1 'above the 64 B .cheat_pad. declares as its largest.*lumps' "$dir/o" "lumped"
expect 1 'empty \(0-byte\) messages where .cheat_pad. declares 0.*pad the message count' "$dir/o" "padded"
"$VERIFY" --np 3 --results "$dir/p.txt" --algo cheat_pad --count 1021 --dtype f32 --op sum --inplace 0 \
    --misaligned 0 --inputs exact --chunk 64 --traffic ring_pipelined > "$dir/v" 2>&1; rc=$?
expect 1 'above ring_pipelined.s largest, 64 B \(lumped\).*\(padded\)' "$dir/v" "lumped and padded, by collverify"
# ... while ring_pipelined itself passes both.
"$@" -np 3 "$CHECK" --algo ring_pipelined --count 1,2,1021 --dtype f32 --op sum --chunk 64 \
    --results "$dir/rp.txt" > "$dir/o" 2>&1; rc=$?
expect 0 '^[0-9]+ passed, 0 failed$' "$dir/o" "ring_pipelined"
"$VERIFY" --np 3 --results "$dir/rp.txt" --algo ring_pipelined --count 1,2,1021 --dtype f32 --op sum \
    --chunk 64 > "$dir/v" 2>&1; rc=$?
expect 0 '^[0-9]+ passed, 0 failed$' "$dir/v" "ring_pipelined verified"

# 5. No message count declared: said; a failure with --require-msgs.
"$@" -np 2 "$CHEATS" check --algo quiet_ring --count 5 --dtype f32 --op sum --results "$dir/q.txt" > "$dir/o" 2>&1; rc=$?
expect 0 'quiet_ring messages: message count not declared \(msgs_sent\): not checked' "$dir/o" "undeclared count"
# ... and by collverify: a formula the descriptor lacks fails with --require-msg-checks.
"$VERIFY" --np 2 --results "$dir/q.txt" --algo quiet_ring --count 5 --dtype f32 --op sum > "$dir/v" 2>&1; rc=$?
expect 0 '^[0-9]+ passed, 0 failed$' "$dir/v" "undeclared count, not required"
"$VERIFY" --np 2 --results "$dir/q.txt" --algo quiet_ring --count 5 --dtype f32 --op sum --require-msg-checks > "$dir/v" 2>&1; rc=$?
expect 1 'rank 0: the descriptor declares no message count \(msgs_sent\): this lab checks every message' "$dir/v" "--require-msg-checks"
"$@" -np 2 "$CHEATS" check --algo quiet_ring --count 5 --dtype f32 --op sum --require-msgs > "$dir/o" 2>&1; rc=$?
expect 1 'not declared \(msgs_sent\): FAIL \(--require-msgs\)' "$dir/o" "--require-msgs"

# 6. Paired runs: every timed call checked.
P=(-n 4 -w 1 --model none --seed 9)
# An algorithm that does nothing when benched finds no answer left for it.
"$@" -np 2 "$CHEATS" bench --paired --algo ring,cheat_benchidle -b 64K -e 64K "${P[@]}" \
    --results "$dir/b.txt" > "$dir/o" 2>&1; rc=$?
expect 1 "'cheat_benchidle' at 65536 B, timed call 1: 16384 of 16384 elements wrong" "$dir/o" "idle when benched"
"$VERIFY" --np 2 --paired --results "$dir/b.txt" --algo ring,cheat_benchidle -b 64K -e 64K "${P[@]}" > "$dir/v" 2>&1; rc=$?
expect 1 'cheat_benchidle n=16384 timed call 1  FAIL  .*rank 0: its result is not the expected one' "$dir/v" "idle, verified"
# An answer replayed from an earlier call, without communicating.
"$@" -np 2 "$CHEATS" bench --paired --algo ring,cheat_cache -b 64K -e 64K "${P[@]}" > "$dir/o" 2>&1; rc=$?
expect 1 "'cheat_cache' at 65536 B, timed call [0-9]+: [0-9]+ of 16384 elements wrong; traffic: rank [01] sent 0 B" "$dir/o" "cache"
# Wrong only above 4 Mi elements: one timed call at 4 Mi + 1 finds it.
"$@" -np 2 "$CHEATS" bench --paired --algo ring,cheat_big -b 16777220 -e 16777220 -n 1 -w 0 --model none \
    > "$dir/o" 2>&1; rc=$?
expect 1 "'cheat_big' at 16777220 B, timed call 1: 1 of 4194305 elements wrong" "$dir/o" "wrong above 4 Mi"
# Far faster than the library's side: flagged for review, capped.
"$@" -np 2 "$CHEATS" bench --paired --algo slow_ring,ring -b 1K -e 1K "${P[@]}" --csv "$dir/s.csv" \
    --results "$dir/s.txt" > "$dir/o" 2>&1; rc=$?
expect 0 'review: B above 2x A, not scored' "$dir/o" "review row"
awk -F, 'NR == 2 && $13 == 1 { ok = 1 } END { exit !ok }' "$dir/s.csv" || { cat "$dir/s.csv"; fail "review column"; }
"$VERIFY" --np 2 --paired --results "$dir/s.txt" --algo slow_ring,ring -b 1K -e 1K "${P[@]}" > "$dir/v" 2>&1; rc=$?
expect 0 '^ratio 2.000 at 1024 B review \(measured [0-9.]+' "$dir/v" "review, verified"
expect 0 '^8 passed, 0 failed$' "$dir/v" "paired verified"
sed '/^timed 0 3 1 1 /d' "$dir/s.txt" > "$dir/bad.txt"
"$VERIFY" --np 2 --paired --results "$dir/bad.txt" --algo slow_ring,ring -b 1K -e 1K "${P[@]}" > "$dir/v" 2>&1; rc=$?
expect 1 'ring n=256 timed call 4  FAIL  rank 1: no record of this call' "$dir/v" "paired missing record"

# 7. Reduce-scatter and all-gather (--coll): every rank's own expected result
#    (rank r's block of the reduction; every rank's block), in place too.
for C in reduce_scatter allgather; do
  CC=(--coll "$C" --count 0,1,p+1,100 --dtype f32,i64 --seed 77)
  "$@" -np 3 "$CHECK" --algo ring "${CC[@]}" --results "$dir/$C.txt" > "$dir/o" 2>&1; rc=$?
  expect 0 '^[0-9]+ passed, 0 failed$' "$dir/o" "honest $C"
  n=$(sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p' "$dir/o")
  "$VERIFY" --np 3 --results "$dir/$C.txt" --algo ring "${CC[@]}" > "$dir/v" 2>&1; rc=$?
  expect 0 "^$n passed, 0 failed\$" "$dir/v" "honest $C file"
  # ... the run's collective, not another's,
  "$VERIFY" --np 3 --results "$dir/$C.txt" --algo ring "${CC[@]:2}" > "$dir/v" 2>&1; rc=$?
  expect 1 "it called $C, expected allreduce" "$dir/v" "$C file checked as an all-reduce"
  # a digest changed, a record missing, a record twice,
  rec=$(awk '$1 == "call" && $4 == 1 && $5 == 2 && / count=100 / { print $2, $3; exit }' "$dir/$C.txt")
  awk -v k="${rec#* }" '$1 == "call" && $3 == k && $4 == 1 && $5 == 2 { sub(/digest=[0-9a-f]/, "digest=f") } { print }' \
      "$dir/$C.txt" > "$dir/bad.txt"
  "$VERIFY" --np 3 --results "$dir/bad.txt" --algo ring "${CC[@]}" > "$dir/v" 2>&1; rc=$?
  expect 1 'n=100 .*FAIL  call 2 of 2: rank 2: its result is not the expected one' "$dir/v" "$C changed digest"
  awk -v k="${rec#* }" '!($1 == "call" && $3 == k && $4 == 0 && $5 == 1)' "$dir/$C.txt" > "$dir/bad.txt"
  "$VERIFY" --np 3 --results "$dir/bad.txt" --algo ring "${CC[@]}" > "$dir/v" 2>&1; rc=$?
  expect 1 "^$((n - 1)) passed, 1 failed\$" "$dir/v" "$C missing record"
  expect 1 'FAIL  call 1 of 2: rank 1: no record of this call' "$dir/v" "$C missing record"
  { cat "$dir/$C.txt"; awk -v k="${rec#* }" '$1 == "call" && $3 == k && $4 == 1 && $5 == 0' "$dir/$C.txt"; } > "$dir/bad.txt"
  "$VERIFY" --np 3 --results "$dir/bad.txt" --algo ring "${CC[@]}" > "$dir/v" 2>&1; rc=$?
  expect 1 'rank 0: 2 records of this call' "$dir/v" "$C duplicated record"
  # a program that does nothing and prints a passing closing line,
  rm -f "$dir/f.txt"   # the forger of the collective before wrote one (never written over)
  "$@" -np 3 "$CHEATS" check --algo cheat_forge "${CC[@]}" --results "$dir/f.txt" > "$dir/o" 2>&1
  grep -q '^1000 passed, 0 failed$' "$dir/o" || { cat "$dir/o"; fail "the forged line ($C)"; }
  "$VERIFY" --np 3 --results "$dir/f.txt" --algo cheat_forge "${CC[@]}" > "$dir/v" 2>&1; rc=$?
  expect 1 'cheat_forge n=1 .*FAIL  call 1 of 2: .*rank 0: its result is not the expected one' "$dir/v" "$C forged"
  # and traffic against the library formula named (an algorithm collverify
  # does not know): the ring's passes, the recursive one's does not.
  sed -E "s/^call ring /call mine /" "$dir/$C.txt" > "$dir/mine.txt"
  "$VERIFY" --np 3 --results "$dir/mine.txt" --algo mine "${CC[@]}" --traffic ring > "$dir/v" 2>&1; rc=$?
  expect 0 "^$n passed, 0 failed\$" "$dir/v" "$C against the ring's traffic"
  other=$([ "$C" = reduce_scatter ] && echo halving || echo rd)
  "$VERIFY" --np 3 --results "$dir/mine.txt" --algo mine "${CC[@]}" --traffic $other > "$dir/v" 2>&1; rc=$?
  expect 1 "(traffic|messages): rank [0-9] sent [0-9]+( B)?, $other says" "$dir/v" "$C against $other's traffic"
done
# Reduce-scatter: each rank's own block, so one rank's record of another's
# block fails (rank 1 claims rank 0's result).
awk '$1 == "call" && / count=100 / && $5 == 0 { d[$3 " " $4] = $0; sub(/.* digest=/, "", d[$3 " " $4]); sub(/ .*/, "", d[$3 " " $4]) }
     { a[NR] = $0 } END { for (i = 1; i <= NR; i++) { $0 = a[i]
       if ($1 == "call" && / count=100 / && $5 == 1) sub(/digest=[0-9a-f]+/, "digest=" d[$3 " " $4]); print } }' \
    "$dir/reduce_scatter.txt" > "$dir/bad.txt"
"$VERIFY" --np 3 --results "$dir/bad.txt" --algo ring --coll reduce_scatter --count 0,1,p+1,100 --dtype f32,i64 \
    --seed 77 > "$dir/v" 2>&1; rc=$?
expect 1 'ring n=100 .*FAIL  call 1 of 2: rank 1: its result is not the expected one' "$dir/v" "rank 0's block as rank 1's"

# 8. Paired runs of the halves (collbench --paired --coll): every timed call
#    checked, by collbench and by collverify.
"$@" -np 2 "$CHEATS" bench --paired --coll reduce_scatter --algo ring,cheat_benchidle -b 64K -e 64K "${P[@]}" \
    --results "$dir/rb.txt" > "$dir/o" 2>&1; rc=$?
expect 1 "'cheat_benchidle' at 65536 B, timed call 1: 8192 of 8192 elements wrong" "$dir/o" "rs idle when benched"
"$VERIFY" --np 2 --paired --coll reduce_scatter --results "$dir/rb.txt" --algo ring,cheat_benchidle -b 64K -e 64K \
    "${P[@]}" > "$dir/v" 2>&1; rc=$?
expect 1 'cheat_benchidle n=16384 timed call 1  FAIL  .*rank 0: its result is not the expected one' "$dir/v" "rs idle, verified"
"$@" -np 3 "$CHEATS" bench --paired --coll allgather --algo ring,direct -b 1K -e 4K "${P[@]}" \
    --results "$dir/ag.txt" > "$dir/o" 2>&1; rc=$?
expect 0 '^ +4096 ' "$dir/o" "paired all-gather"
"$VERIFY" --np 3 --paired --coll allgather --results "$dir/ag.txt" --algo ring,direct -b 1K -e 4K "${P[@]}" \
    > "$dir/v" 2>&1; rc=$?
expect 0 '^ratio [0-9.]+ at 4096 B' "$dir/v" "paired all-gather, verified"
expect 0 '^24 passed, 0 failed$' "$dir/v" "paired all-gather, verified"
sed '/^timed 1 2 0 2 /s/digest=[0-9a-f]/digest=f/' "$dir/ag.txt" > "$dir/bad.txt"
"$VERIFY" --np 3 --paired --coll allgather --results "$dir/bad.txt" --algo ring,direct -b 1K -e 4K "${P[@]}" \
    > "$dir/v" 2>&1; rc=$?
expect 1 'ring n=512 timed call 3  FAIL  rank 2: its result is not the expected one' "$dir/v" "paired all-gather, changed"
echo "verify ok"
