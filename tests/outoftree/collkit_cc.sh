#!/usr/bin/env bash
# collkit_cc.sh COLLKIT_CC SRCDIR MPIRUN [FLAGS...] — the documented command
# builds a file from anywhere: star.c copied to a temporary folder becomes a
# program whose check / bench / list know oot_star; a file with a main() and
# a file that is not C are refused with a message.
set -u
CC=$1; SRC=$2; shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
cp "$SRC/star.c" "$dir/my_star.c"
"$CC" "$dir/my_star.c" -o "$dir/out/my_star" > "$dir/cc.log" 2>&1 && ok || { bad "collkit-cc failed"; cat "$dir/cc.log"; }
if [ -x "$dir/out/my_star" ]; then
  "$dir/out/my_star" list | grep -q "^oot_star " && ok || bad "list lacks oot_star"
  "$@" -np 2 "$dir/out/my_star" check --algo oot_star --quick > "$dir/check.log" 2>&1 && ok \
    || { bad "check"; tail -5 "$dir/check.log"; }
  "$@" -np 2 "$dir/out/my_star" bench --algo oot_star,ring -b 1K -e 4K -n 2 -w 0 --model none > "$dir/bench.log" 2>&1 \
    && grep -q "^  oot_star" "$dir/bench.log" && ok || { bad "bench"; tail -5 "$dir/bench.log"; }
  "$dir/out/my_star" nosuchtool > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "unknown tool should exit 2"
  # a second build of the same file is incremental and still works
  "$CC" "$dir/my_star.c" -o "$dir/out/my_star" > /dev/null 2>&1 && ok || bad "rebuild"
fi
printf '#include "collkit_algo.h"\nint main(void) { return 0; }\n' > "$dir/has_main.c"
"$CC" "$dir/has_main.c" -o "$dir/x" > "$dir/m.log" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "defines main" "$dir/m.log" && ok || bad "a file with main() was not refused (rc $rc)"
"$CC" "$dir/cc.log" -o "$dir/x" > "$dir/m.log" 2>&1; [ $? -eq 2 ] && ok || bad "a non-.c file was not refused"
"$CC" > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "no arguments should exit 2"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
