#!/usr/bin/env bash
# datasets/fetch, offline: COLLKIT_FETCH_FROM stands in for the download, so
# the sha256 checks run for real. Exit 77 (skip) when no copy of the data is
# at ../shared to copy from.
#   test_fetch.sh PATH/TO/datasets/fetch
set -u
fetch=$1
src=$(cd "$(dirname "$fetch")/.." && pwd)/../shared/datasets/madewithml
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collkit-fetch-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# 0. What is in the way of the files is never replaced or read, and the
#    message says what it is (no data needed: fetch stops before copying).
mkdir -p "$tmp/empty" "$tmp/d0" "$tmp/d1/dataset.csv"
ln -s "$tmp/nowhere" "$tmp/d0/dataset.csv"
if COLLKIT_FETCH_FROM=$tmp/empty "$fetch" --dest "$tmp/d0" > "$tmp/out" 2>&1; then bad "a dangling link accepted"
else grep -q "d0/dataset.csv is a symbolic link to $tmp/nowhere, which does not exist; leaving it untouched" "$tmp/out" && ok ||
  { bad "dangling link message"; cat "$tmp/out"; }; fi
[ -L "$tmp/d0/dataset.csv" ] && [ -z "$(ls -A "$tmp/d0" | grep -v '^dataset.csv$')" ] && ok || bad "the link kept, nothing added"
if COLLKIT_FETCH_FROM=$tmp/empty "$fetch" --dest "$tmp/d1" > "$tmp/out" 2>&1; then bad "a folder named dataset.csv accepted"
else grep -q "d1/dataset.csv is a folder; leaving it untouched" "$tmp/out" && ok || { bad "folder message"; cat "$tmp/out"; }; fi
: > "$tmp/afile"
if COLLKIT_FETCH_FROM=$tmp/empty "$fetch" --dest "$tmp/afile" > "$tmp/out" 2>&1; then bad "--dest a file accepted"
else grep -q "afile exists and is not a folder" "$tmp/out" && ok || { bad "--dest a file message"; cat "$tmp/out"; }; fi

if [ ! -f "$src/dataset.csv" ] || [ ! -f "$src/holdout.csv" ]; then
  echo "SKIP: no data at $src ($pass checks passed, $fail failed before it)"
  [ "$fail" = 0 ] && exit 77 || exit 1
fi

# 1. A good source: both files arrive and match.
if COLLKIT_FETCH_FROM=$src "$fetch" --dest "$tmp/a" > "$tmp/out" 2>&1; then ok; else bad "fetch from a good copy"; cat "$tmp/out"; fi
cmp -s "$src/dataset.csv" "$tmp/a/dataset.csv" && cmp -s "$src/holdout.csv" "$tmp/a/holdout.csv" && ok || bad "files copied intact"
# ... with the licence and where they come from beside them; a LICENSE already
# there is the user's and is kept.
cmp -s "$(dirname "$fetch")/madewithml.LICENSE" "$tmp/a/LICENSE" && grep -q "MIT License" "$tmp/a/LICENSE" &&
  grep -q "479e0f3813cc0583717b86512d112b0a397f717ac33652504afdf763c1f3aff1" "$tmp/a/SOURCE.md" && ok \
  || bad "LICENSE and SOURCE.md beside the files"
mkdir -p "$tmp/own" && echo mine > "$tmp/own/LICENSE"
COLLKIT_FETCH_FROM=$src "$fetch" --dest "$tmp/own" > "$tmp/out" 2>&1 && [ "$(cat "$tmp/own/LICENSE")" = mine ] &&
  [ -f "$tmp/own/SOURCE.md" ] && ok || { bad "an existing LICENSE kept"; cat "$tmp/out"; }

# 2. Again: nothing to do.
if COLLKIT_FETCH_FROM=$src "$fetch" --dest "$tmp/a" > "$tmp/out" 2>&1 && \
   [ "$(grep -c 'already present, sha256 ok' "$tmp/out")" = 2 ]; then ok; else bad "second run skips"; cat "$tmp/out"; fi

# 3. A corrupted source: refused, the download deleted, no partial file left.
mkdir -p "$tmp/corrupt"
cp "$src/dataset.csv" "$src/holdout.csv" "$tmp/corrupt/"
printf 'x' >> "$tmp/corrupt/holdout.csv"
if COLLKIT_FETCH_FROM=$tmp/corrupt "$fetch" --dest "$tmp/b" > "$tmp/out" 2>&1; then
  bad "corrupted holdout.csv accepted"
else
  grep -q 'holdout.csv: sha256 mismatch' "$tmp/out" && ok || { bad "mismatch message"; cat "$tmp/out"; }
fi
[ ! -e "$tmp/b/holdout.csv" ] && ok || bad "mismatched download removed"
[ -z "$(ls -A "$tmp/b" | grep part)" ] && ok || bad "no partial files left"
cmp -s "$src/dataset.csv" "$tmp/b/dataset.csv" && ok || bad "the good file still arrived"

# 4. A file the user already has with other content is never touched.
printf 'my own edits\n' > "$tmp/b/holdout.csv"
if COLLKIT_FETCH_FROM=$src "$fetch" --dest "$tmp/b" > "$tmp/out" 2>&1; then
  bad "existing different file overwritten or accepted"
else
  grep -q 'leaving it untouched' "$tmp/out" && ok || { bad "untouched message"; cat "$tmp/out"; }
fi
[ "$(cat "$tmp/b/holdout.csv")" = "my own edits" ] && ok || bad "user's file kept"

# 5. Bad arguments.
"$fetch" --bogus > /dev/null 2>&1; [ $? = 2 ] && ok || bad "unknown argument exits 2"
COLLKIT_FETCH_FROM=$tmp/nowhere "$fetch" --dest "$tmp/c" > "$tmp/out" 2>&1 && bad "missing source folder accepted" || ok

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
