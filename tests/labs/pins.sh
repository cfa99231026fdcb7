#!/usr/bin/env bash
# pins.sh SRC — every check part of every lab (labs/*/lab.conf) is pinned:
# its verify= names the algorithm whose traffic formulas the student's must
# meet (verify=--traffic+ALGO), so a file of another shape that declares its
# own traffic (a lab 01 ring renamed my_rd) cannot pass it; a part that
# cannot be pinned says why on its own line ("# unpinned: WHY"). It reads
# the lab.conf files only. The check is run first on broken copies (a pin
# taken out, a reason left empty), where it must fail.
set -u
SRC=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# unpinned CONF...: each check part with neither a pin nor a reason, one line
# each ("FILE:LINE: part NAME: ...").
unpinned() {
  local conf n line code why kw name points kind rest
  for conf in "$@"; do
    n=0
    while IFS= read -r line || [ -n "$line" ]; do
      n=$((n + 1))
      code=${line%%#*}; why=""
      [ "$code" = "$line" ] || why=${line#*#}
      read -r kw name points kind rest <<< "$code"
      [ "${kw:-}" = part ] && [ "${kind:-}" = check ] || continue
      [[ " $rest " =~ [[:space:]]verify=([^[:space:]]*\+)?--traffic\+[A-Za-z0-9_]+ ]] && continue
      [[ $why =~ ^[[:space:]]*unpinned:[[:space:]]*[^[:space:]] ]] && continue
      echo "$conf:$n: part $name: no traffic formula (verify=--traffic+ALGO) and no '# unpinned: WHY' on its line"
    done < "$conf"
  done
}

# Broken copies: lab 03's rd_correct without its pin; lab 05's twoshot_launch
# with an empty reason; a --traffic that is the checker's argument, not collverify's.
sed 's/ verify=--traffic+rd$//' "$SRC/labs/03-latency/lab.conf" > "$T/03.conf"
out=$(unpinned "$T/03.conf")
grep -q "^$T/03.conf:[0-9]*: part rd_correct: no traffic formula" <<< "$out" && ! grep -q tree_correct <<< "$out" && ok ||
  bad "lab 03 without rd_correct's pin: '$out'"
sed 's/\(^part twoshot_launch .*# unpinned:\).*/\1/' "$SRC/labs/05-ipc/lab.conf" > "$T/05.conf"
out=$(unpinned "$T/05.conf")
grep -q "part twoshot_launch: no traffic formula" <<< "$out" && ! grep -q twoshot_correct <<< "$out" && ok ||
  bad "lab 05 with an empty reason: '$out'"
printf 'part correctness 60 check np=2 args=--traffic+ring verify=--allow-self-traffic\n' > "$T/args.conf"
out=$(unpinned "$T/args.conf")
grep -q "part correctness: no traffic formula" <<< "$out" && ok || bad "a pin in args= taken for collverify's: '$out'"

# The labs themselves.
out=$(unpinned "$SRC"/labs/*/lab.conf)
[ -z "$out" ] && ok || bad "check parts without a pin:"$'\n'"$out"
checks=$(sed 's/#.*//' "$SRC"/labs/*/lab.conf | awk '$1 == "part" && $4 == "check"' | wc -l)
[ "$checks" -ge 12 ] && ok || bad "only $checks check parts found in $SRC/labs/*/lab.conf"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
