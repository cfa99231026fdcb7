#!/usr/bin/env bash
# compare_cli.sh SRC BUILD — trainer/compare.sh, tagtrain against PyTorch, on a
# tiny model (1024 features, 32 hidden) for one round of one epoch, so that the
# comparison the README quotes does not rot unseen: it exits 0 and prints a
# round with tagtrain's figures (samples/s at p = 1 and 2, efficiencies
# between 0 and 2) and the min and median lines. Without PyTorch it says so
# and PyTorch's columns are n/a; with it they are numbers. A bad option is a
# usage error (exit 2) before anything runs.
set -u
SRC=$1 BUILD=$2
# tagtrain trains on the real data: without it, skip (exit 77).
. "$(dirname "$0")/../lib/need_data.sh"
COLLKIT_SOURCE_DIR=${COLLKIT_SOURCE_DIR:-$SRC} skip_without_data
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
num='[0-9]+(\.[0-9]+)?'

"$SRC/trainer/compare.sh" -b "$BUILD" -r 1 -e 1 -F 1024 -H 32 > "$d/out" 2> "$d/err"
rc=$?
[ $rc = 0 ] && ok || bad "compare.sh exited $rc: $(cat "$d/out" "$d/err")"
grep -Eq "^tagtrain's default features: [0-9]+ non-zeros a row" "$d/out" && ok || bad "no density line"
# round 1: tt_p1 torch_p1 ratio | tt_1 tt_2 tt_eff shm_2 shm_eff ddp_1 ddp_2 ddp_eff
row=$(grep -E '^ +1 ' "$d/out")
read -r _ tt1 torch ratio _ s1 s2 eff s3 effs ddp1 ddp2 effd <<< "$row"
for v in "$tt1" "$s1" "$s2" "$s3"; do
  [[ $v =~ ^$num$ ]] && awk -v x="$v" 'BEGIN { exit !(x > 0) }' && ok || bad "tagtrain's samples/s '$v' in: $row"
done
for v in "$eff" "$effs"; do
  [[ $v =~ ^$num$ ]] && awk -v x="$v" 'BEGIN { exit !(x > 0 && x < 2) }' && ok || bad "tagtrain's efficiency '$v' in: $row"
done
if python3 -c 'import torch' 2> /dev/null || /usr/bin/python3 -c 'import torch' 2> /dev/null; then
  for v in "$torch" "$ratio" "$ddp1" "$ddp2" "$effd"; do [[ $v =~ ^$num$ ]] && ok || bad "PyTorch's figure '$v' in: $row"; done
else
  grep -q "compare.sh: PyTorch not found" "$d/out" && ok || bad "no word that PyTorch is missing: $(cat "$d/out")"
  for v in "$torch" "$ratio" "$ddp1" "$ddp2" "$effd"; do [ "$v" = n/a ] && ok || bad "PyTorch's column '$v', want n/a: $row"; done
fi
grep -Eq '^  min +[0-9]' "$d/out" && grep -Eq '^  med +[0-9]' "$d/out" && ok || bad "no min/med lines: $(cat "$d/out")"
[ ! -s "$d/err" ] && ok || bad "compare.sh wrote errors: $(cat "$d/err")"

"$SRC/trainer/compare.sh" -b "$BUILD" -r 0 > "$d/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "usage: compare.sh" "$d/out" && ok || bad "-r 0: rc $rc $(cat "$d/out")"
"$SRC/trainer/compare.sh" -b "$BUILD" -x > "$d/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "usage: compare.sh" "$d/out" && ok || bad "-x: rc $rc $(cat "$d/out")"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
