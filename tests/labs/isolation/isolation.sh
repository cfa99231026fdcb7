#!/usr/bin/env bash
# isolation.sh SRC BUILD — the graded code alone in its own process
# (COLLKIT_ISOLATE=1, plugin/isolate_host.c): each property shown failing on
# the old design (the file linked into the checker's process) and holding on
# the new, with the numbers of both:
#   scan.c      finds the library's ring descriptor and MPI by reading memory,
#               and passes by forwarding to the ring / finds neither, passes nothing
#   counters.c  hides an extra message in the ck_comm counters / the checker counts it
#               (graded on lab 01: correctness 60 / 60 in process, 10 / 60 isolated)
#   clock.c     moves the benchmark's start time on its caller's stack / its 30 ms show
#   reach.c     open, socket, fork, executable memory, a thread / every one refused
#   broken_set.c  the checker's verdicts on broken algorithms read the same in both
# and the channel's cost: the library ring at 16 MB, p = 2, in process and isolated.
set -u
SRC=$1 B=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
pass=0 fail=0
check() {   # check WHAT CONDITION...: one assertion
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL: $what"; fail=$((fail + 1)); fi
}
has() { grep -Eq -- "$2" <<<"$1"; }
run() { local iso=$1; shift; COLLKIT_ISOLATE=$iso timeout 300 "$B/bin/ckrun" "$@" 2>&1; }

cp "$SRC/tests/labs/isolation/scan.c" "$SRC/tests/labs/isolation/probe.h" "$SRC/tests/labs/isolation/broken_set.c" "$W/"
for c in counters clock reach; do bash "$SRC/tests/labs/cheats/assemble.sh" "$SRC" "../isolation/$c" "$W/$c.c" || exit 1; done
sed -i 's|"../../checker/broken.c"|"'"$SRC"'/tests/checker/broken.c"|' "$W/broken_set.c"
for c in scan counters clock reach broken_set; do
  "$B/bin/collkit-cc" "$W/$c.c" -o "$W/$c" > "$W/$c.build" 2>&1 || { cat "$W/$c.build"; echo "FAIL: $c does not build"; exit 1; }
done

echo "== scan.c: the library's ring and MPI, by reading memory"
old=$(run 0 -np 2 "$W/scan" check --algo my_ring --quick); new=$(run 1 -np 2 "$W/scan" check --algo my_ring --quick)
echo "in process: $(grep -m1 -o 'isolation-scan.*' <<<"$old"); $(grep -o '[0-9]* passed, [0-9]* failed' <<<"$old")"
echo "isolated:   $(grep -m1 -o 'isolation-scan.*' <<<"$new"); $(grep -o '[0-9]* passed, [0-9]* failed' <<<"$new")"
check "in process, the scan finds the ring and MPI" has "$old" "ring descriptor found; MPI found"
check "in process, forwarding to the ring passes" has "$old" " passed, 0 failed"
check "isolated, the scan finds neither" has "$new" "ring descriptor not found; MPI not found"
check "isolated, the file passes nothing it did not do" has "$new" " passed, [1-9][0-9]* failed"

echo "== counters.c: an extra message hidden in the traffic counters"
old=$(run 0 -np 3 "$W/counters" check --algo my_ring --quick); new=$(run 1 -np 3 "$W/counters" check --algo my_ring --quick)
echo "in process: $(grep -m1 -o 'isolation-counters.*' <<<"$old"); $(grep -o '[0-9]* passed, [0-9]* failed' <<<"$old")"
echo "isolated:   $(grep -m1 -o 'isolation-counters.*' <<<"$new"); $(grep -o '[0-9]* passed, [0-9]* failed' <<<"$new")"
echo "            $(grep -m1 -o 'traffic: rank.*declared volume' <<<"$new")"
check "in process, counters rewritten and the traffic check passes" has "$old" "isolation-counters: [1-9][0-9]* word.* rewritten"
check "in process, 0 failed" has "$old" " passed, 0 failed"
check "isolated, no counter to rewrite" has "$new" "isolation-counters: 0 word"
check "isolated, the checker counts the extra message" has "$new" "traffic: rank [0-9] sent .* 8 B more than declared"

echo "== counters.c graded (lab 01: its traffic pinned to the ring's formula), old design and new"
correctness() {   # correctness ISO: the correctness score of counters.c, its report's lines shown
  local g
  g=$(COLLGRADE_ISOLATE=$1 COLLGRADE_WORK="$W/grade$1" timeout 600 "$B/bin/collgrade" "$SRC/labs/01-ring" --file "$W/counters.c" 2>&1)
  grep -E '^  (correctness|integrity|TOTAL) ' <<<"$g" | cut -c1-150 | sed "s/^/COLLGRADE_ISOLATE=$1: /" >&2
  awk '$1 == "correctness" { print $2 }' <<<"$g"
}
c0=$(correctness 0); c1=$(correctness 1)
check "in process, the hidden traffic passes the checker: 60 / 60" [ "${c0:-}" = 60.0 ]
check "isolated, the checker counts it: 10 / 60 (p = 1 only)" [ "${c1:-}" = 10.0 ]

echo "== clock.c: 30 ms a call, hidden by moving the benchmark's start time"
old=$(run 0 -np 2 "$W/clock" bench --algo my_ring -b 64K -e 64K -n 10 --model none)
new=$(run 1 -np 2 "$W/clock" bench --algo my_ring -b 64K -e 64K -n 10 --model none)
omin=$(awk '$1 == "my_ring" { print $8 }' <<<"$old"); nmin=$(awk '$1 == "my_ring" { print $8 }' <<<"$new")
echo "in process: fastest call ${omin:-?} us; isolated: fastest call ${nmin:-?} us (each call spins 30000 us)"
check "in process, a call shows under 30 ms" awk -v t="${omin:-1e9}" 'BEGIN { exit !(t < 30000) }'
check "isolated, every call shows its 30 ms" awk -v t="${nmin:-0}" 'BEGIN { exit !(t >= 30000) }'

echo "== reach.c: what a confined process may not do"
old=$(run 0 -np 2 "$W/reach" check --algo my_ring --quick); new=$(run 1 -np 2 "$W/reach" check --algo my_ring --quick)
echo "in process: $(grep -m1 -o 'isolation-confine.*' <<<"$old")"
echo "isolated:   $(grep -m1 -o 'isolation-confine.*' <<<"$new")"
check "in process, all five work" has "$old" "open=ok socket=ok fork=ok exec-map=ok thread=ok"
check "isolated, all five refused" has "$new" "open=Operation not permitted socket=Operation not permitted fork=Operation not permitted exec-map=Operation not permitted thread=Operation not permitted"
check "isolated, the ring's work still passes" has "$new" " passed, 0 failed"

echo "== the checker's verdicts on broken algorithms, in process and isolated"
for a in broken_ring_index broken_ring_skip broken_ring_leak broken_ring_recvsize broken_ring_stray \
         broken_ring_scratch broken_ring_scratch_end broken_ring_status broken_ring_recvin \
         broken_ring_uninit broken_naive_inplace; do
  run 0 -np 3 "$W/broken_set" check --algo $a --quick --seed 7 | grep -v 'Process name' > "$W/$a.0"
  run 1 -np 3 "$W/broken_set" check --algo $a --quick --seed 7 | grep -v 'Process name' > "$W/$a.1"
  # (a case whose in-process verdict names something else first, where the
  # isolated run names a write beside the buffers, is counted apart)
  same=$(paste -d '\n' "$W/$a.0" "$W/$a.1" | awk 'NR % 2 { o = $0; next } $0 == o { s++; next }
         /wrote outside (sendbuf|recvbuf)/ { w++; next } { d++ } END { printf "%d %d %d", s, w, d }')
  read -r s_ w_ d_ <<<"$same"
  echo "$a: $s_ lines the same, $w_ a write beside the buffers named instead, $d_ different"
  [ "$d_" = 0 ] || diff "$W/$a.0" "$W/$a.1" | head -4
  check "$a: the same verdicts" [ "$d_" = 0 -a "$(wc -l < "$W/$a.0")" = "$(wc -l < "$W/$a.1")" ]
done
# A write beside the buffers: in process it lands in the checker's guards;
# isolated it is never written back into the trusted process (that memory is
# not the call's), and the call fails naming it.
for a in broken_ring_sendover broken_naive_overrun broken_ring_far; do
  old=$(run 0 -np 3 "$W/broken_set" check --algo $a --quick --seed 7); new=$(run 1 -np 3 "$W/broken_set" check --algo $a --quick --seed 7)
  echo "$a in process: $(grep -m1 -o 'FAIL .*' <<<"$old" | cut -c1-160)"
  echo "$a isolated:   $(grep -m1 -o 'FAIL .*' <<<"$new" | cut -c1-160)"
  check "$a: fails in process" has "$old" " passed, [1-9][0-9]* failed"
  check "$a: fails isolated, named" has "$new" "wrote outside (sendbuf|recvbuf)"
done

echo "== the channel's cost: the library ring, 16 MB, p = 2, out of place (fastest of 20 calls)"
for iso in 0 1 0 1; do
  t=$(run $iso -np 2 "$W/scan" bench --algo ring -b 16M -e 16M -n 20 -w 3 --model none | awk '$1 == "ring" { print $8 }')
  echo "COLLKIT_ISOLATE=$iso: ${t:-?} us"
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
