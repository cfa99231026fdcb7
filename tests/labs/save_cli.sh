#!/usr/bin/env bash
# save_cli.sh COLLKIT_CC SRC — the crash harness's command line (PROG save),
# run without an MPI launcher: bad input exits 2 with a message, --count and
# --trace show the calls, a crash leaves the old version and --verify says so,
# a program with no saver (an algorithm file) says what is missing, calls the
# harness cannot follow (a shared file mapping, a child process) are named,
# --kill-random passes the reference save, and a save that looks for its
# crash point finds nothing.
set -u
CC=$1 SRC=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# expect WANT_RC REGEX CMD...: CMD's exit status and output (both streams)
expect() {
  local want=$1 re=$2 out rc; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ] && grep -Eq -- "$re" <<< "$out"; then ok; else bad "$* -> exit $rc (want $want), output: $out"; fi
}
"$CC" "$SRC/labs/06-faults/solution/my_save.c" -o "$dir/lab" > "$dir/cc.log" 2>&1 || { cat "$dir/cc.log"; echo "FAIL: build"; exit 1; }
"$CC" "$SRC/labs/01-ring/solution/my_ring.c" -o "$dir/ring" > "$dir/cc2.log" 2>&1 || { cat "$dir/cc2.log"; echo "FAIL: build ring"; exit 1; }
"$CC" "$SRC/tests/labs/hidden_save.c" -o "$dir/hidden" > "$dir/cc3.log" 2>&1 || { cat "$dir/cc3.log"; echo "FAIL: build hidden"; exit 1; }
"$CC" "$SRC/tests/labs/sneaky_save.c" -o "$dir/sneaky" > "$dir/cc5.log" 2>&1 || { cat "$dir/cc5.log"; echo "FAIL: build sneaky"; exit 1; }
P=$dir/lab; D=$dir/d
fresh() { rm -rf "$D"; mkdir -p "$D"; }
fresh
expect 2 "save: --dir DIR is required" "$P" save
expect 2 "save: --dir $dir/none: No such file" "$P" save --dir "$dir/none"
touch "$dir/file"
expect 2 "save: --dir $dir/file: not a directory" "$P" save --dir "$dir/file"
expect 2 "save: --crash-at '0': expected a whole number" "$P" save --dir "$D" --crash-at 0
expect 2 "save: --fail-at 'x': expected a whole number" "$P" save --dir "$D" --fail-at x
expect 2 "save: --crash-at ' 3': expected a whole number" "$P" save --dir "$D" --crash-at " 3"   # the tools' integer syntax
expect 2 "save: --errno 'EPERM': expected ENOSPC or EIO" "$P" save --dir "$D" --fail-at 1 --errno EPERM
expect 2 "one injection per run" "$P" save --dir "$D" --crash-at 1 --fail-at 2
expect 2 "separate runs" "$P" save --dir "$D" --count --verify
expect 2 "save: unknown or incomplete option '--bogus'" "$P" save --dir "$D" --bogus
expect 2 "save: --kill-random '0': expected a whole number" "$P" save --dir "$D" --kill-random 0
expect 2 "separate runs" "$P" save --dir "$D" --kill-random 5 --count
expect 2 "no saver in this program: its file needs a CK_REGISTER_SAVER" "$dir/ring" save --dir "$D"
fresh
expect 0 "^save: COUNT 9 " "$P" save --dir "$D" --count
fresh
expect 137 "\[3\] write\([0-9]+ state.bin.tmp.[0-9]+, 2061 B\) +<- crash: the process is killed before this call" "$P" save --dir "$D" --trace --crash-at 3
compgen -G "$D/state.bin.tmp.*" > /dev/null && ok || bad "a crash at call 3 left no temporary file"
expect 0 "^save: PASS state.bin holds version 1, whole; my_recover left only state.bin" "$P" save --dir "$D" --verify
[ "$(ls "$D")" = state.bin ] && ok || bad "after --verify the directory holds: $(ls "$D")"
fresh
expect 0 "\[4\] fsync\([0-9]+ state.bin.tmp.[0-9]+\) = -1 EIO +<- injected failure" "$P" save --dir "$D" --trace --fail-at 4 --errno EIO
fresh
expect 0 "^save: PASS version 2 saved in 9 calls" "$P" save --dir "$D/" --size 0
# The reference save killed at random moments; the recipe through a shared
# mapping or a child process: refused and named (the same recipe written with
# write passes, so the refusal is about the mapping and the process; a save
# that tries io_uring first is graded in lab06.uring).
fresh
expect 0 "^save: PASS killed at 20 random moments of a save of version 2 \(65560 B, about [0-9]+ us; --seed 7\)" "$P" save --dir "$D" --kill-random 20 --size 65536 --seed 7
fresh
expect 1 "^save: REFUSED the save made system calls the harness cannot follow: mmap \(a shared mapping of a file\)" env GRADE_TEST_SAVE=mmap "$dir/hidden" save --dir "$D" --count
fresh
expect 1 "^save: REFUSED the save made system calls the harness cannot follow: clone" env GRADE_TEST_SAVE=fork "$dir/hidden" save --dir "$D" --crash-at 3
fresh
expect 0 "^save: COUNT 9 " "$dir/hidden" save --dir "$D" --count
# A save that truncates in place through inline-asm system calls (no C
# library function a link-time wrapper could see): the harness numbers its
# calls, a crash at the first write leaves an empty file, and a real kill at
# random moments tears it.
fresh
expect 137 "^save: crash at call 2: write\([0-9]+ state.bin, 25 B\)" env GRADE_TEST_SAVE=rawsys "$dir/sneaky" save --dir "$D" --size 1 --crash-at 2
expect 1 "^save: FAIL state.bin is empty \(0 bytes\): it must hold version 1 or version 2, whole" env GRADE_TEST_SAVE=rawsys "$dir/sneaky" save --dir "$D" --size 1 --verify
fresh
expect 1 "^save: FAIL killed [0-9]+ us into a save of version 2 .*: state.bin (is empty|holds only the first)" env GRADE_TEST_SAVE=rawsys "$dir/sneaky" save --dir "$D" --size 4194304 --kill-random 100
# A save that looks for its crash point (tests/labs/peeking_save.c: the
# harness's record in its own memory, its own, its parent's and its tracer's
# command lines and environments under /proc, spelled /proc and //proc): the
# saver's process holds none of it, each open of /proc is refused, and the
# injection falls where the harness put it.
"$CC" "$SRC/tests/labs/peeking_save.c" -o "$dir/peek" > "$dir/cc6.log" 2>&1 || { cat "$dir/cc6.log"; echo "FAIL: build peek"; exit 1; }
for inj in "--fail-at 3" "--crash-at 2"; do
  fresh
  # shellcheck disable=SC2086
  out=$("$dir/peek" save --dir "$D" --size 1 $inj 2>&1)
  if grep -q "^peek: nothing found" <<< "$out" && ! grep -q "^peek: .*=" <<< "$out"; then ok; else bad "peek $inj: the save learned its crash point: $out"; fi
done
grep -q "^save: crash at call 2: write([0-9]* state.bin, 25 B)" <<< "$out" && ok || bad "peek --crash-at 2: the crash fell elsewhere: $out"
fresh
expect 0 "^save: REFUSED the save made system calls the harness cannot follow: open of /proc" "$dir/peek" save --dir "$D" --count
# A save that makes the harness's end mark itself, first: its calls are still
# counted (an end mark counts only from where the start mark was made).
"$CC" "$SRC/tests/labs/endmark_save.c" -o "$dir/endmark" > "$dir/cc7.log" 2>&1 || { cat "$dir/cc7.log"; echo "FAIL: build endmark"; exit 1; }
fresh
expect 0 "^save: COUNT 4 " "$dir/endmark" save --dir "$D" --count
fresh
expect 137 "^save: crash at call 2: write\([0-9]+ state.bin, 25 B\)" "$dir/endmark" save --dir "$D" --size 1 --crash-at 2
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
