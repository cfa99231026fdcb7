#!/usr/bin/env bash
# lab_sh.sh SRC — `make labNN` (scripts/lab.sh) creates a student's file once
# and never overwrites it: from the skeleton, or — for a lab whose lab.conf
# says `from = ../01-ring/my_ring.c` (lab 04) — from the student's file of
# that earlier lab, and when that one is missing it says what to do and
# leaves the placeholder. Runs in a scratch copy of labs/ with a stand-in
# grader, so the source tree is never touched.
set -u
SRC=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
mkdir -p "$T/tree/labs" "$T/b/bin"
cp -r "$SRC/labs/01-ring" "$SRC/labs/04-ddp" "$T/tree/labs/"
rm -f "$T"/tree/labs/*/my_*.c
printf '#!/bin/sh\necho "graded $1"\n' > "$T/b/bin/collgrade"; chmod +x "$T/b/bin/collgrade"
cd "$T/tree" || exit 1

# Lab 04 before lab 01: the placeholder, and what to do.
out=$("$SRC/scripts/lab.sh" "$T/b" 04 2>&1)
check 'cmp -s labs/04-ddp/skeleton/my_ring.c labs/04-ddp/my_ring.c' "lab 04 without lab 01: not the placeholder"
check 'grep -q "starts from your labs/01-ring/my_ring.c, which does not exist yet" <<<"$out" &&
       grep -q "make lab01), then: cp labs/01-ring/my_ring.c labs/04-ddp/my_ring.c" <<<"$out" && grep -q "graded 04" <<<"$out"' \
      "lab 04 without lab 01 says: $out"
# Lab 01 once: the skeleton; a second time: the student's file stays.
"$SRC/scripts/lab.sh" "$T/b" 01 > /dev/null 2>&1
check 'cmp -s labs/01-ring/skeleton/my_ring.c labs/01-ring/my_ring.c' "lab 01: not the skeleton"
echo "/* my work */" >> labs/01-ring/my_ring.c
out=$("$SRC/scripts/lab.sh" "$T/b" 01 2>&1)
check 'grep -q "my work" labs/01-ring/my_ring.c && ! grep -q created <<<"$out"' "lab 01's file overwritten: $out"
# Lab 04 after lab 01: the student's ring, not the placeholder (once).
rm labs/04-ddp/my_ring.c
out=$("$SRC/scripts/lab.sh" "$T/b" 04 2>&1)
check 'cmp -s labs/01-ring/my_ring.c labs/04-ddp/my_ring.c && grep -q "created labs/04-ddp/my_ring.c from your labs/01-ring/my_ring.c" <<<"$out"' \
      "lab 04 from lab 01: $out"
echo "/* lab 04 work */" >> labs/04-ddp/my_ring.c
"$SRC/scripts/lab.sh" "$T/b" 04 > /dev/null 2>&1
check 'grep -q "lab 04 work" labs/04-ddp/my_ring.c' "lab 04's file overwritten"
out=$("$SRC/scripts/lab.sh" "$T/b" 09 2>&1); rc=$?
check '[ $rc -eq 2 ] && grep -q "no lab 09" <<<"$out"' "an unknown lab: rc $rc $out"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
