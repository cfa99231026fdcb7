#!/usr/bin/env bash
# ckrun.sh CKRUN — the launcher's arguments: -np must be a whole number of
# ranks from 1 to ckrun's maximum (0 would mean "every slot" to mpirun, a
# number too large for the shell's arithmetic must be a message, not a bash
# error), each refused with exit 2 and one line before mpirun starts; what
# follows the program (its own -n, --help) reaches it unchanged; --help is the
# header comment only. Exit 77 (skipped) without mpirun.
set -u
C=$1
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

# A program that does not exist: should a bad count get through, mpirun fails
# at once instead of starting thousands of processes.
none=/nonexistent/ckrun-test-program
for v in 0 00 000 -1 abc 1e3 0x10 " 2" 4097 99999999999999999999 ""; do
  out=$("$C" -np "$v" $none 2>&1); rc=$?
  check '[ $rc = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "^ckrun: -np '"'$v'"': the number of ranks must be a whole number from 1 to [0-9]" <<<"$out"' \
        "-np '$v': exit $rc, output: $out"
done
out=$("$C" -np 2 -n 3 $none 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "given twice" <<<"$out"' "-np 2 -n 3: exit $rc, output: $out"
out=$("$C" $none 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "^ckrun: usage: ckrun -np N PROGRAM" <<<"$out"' "no -np: exit $rc, output: $out"

# A hostfile that is missing, a folder or a FIFO: one line, exit 2, before mpirun.
hdir=$(mktemp -d "${TMPDIR:-/tmp}/collkit-ckrun-XXXXXX")
trap 'rm -rf "$hdir"' EXIT
mkfifo "$hdir/fifo"
for hf in "/nonexistent/hosts:no such file" "$hdir:a folder, not a file" "$hdir/fifo:not a regular file"; do
  f=${hf%%:*} why=${hf#*:}
  for opt in --hostfile -machinefile; do
    out=$("$C" -np 2 "$opt" "$f" $none 2>&1); rc=$?
    check '[ $rc = 2 ] && [ "$out" = "ckrun: $opt '"'"'$f'"'"': $why" ]' "$opt $f: exit $rc, output: $out"
  done
done
out=$("$C" -np 2 /bin/false --hostfile 2>&1); rc=$?   # the program's own option: not ckrun's
check '[ $rc != 0 ] && ! grep -q "^ckrun:" <<<"$out"' "program's --hostfile: exit $rc, output: $out"
out=$("$C" -np 2 --hostfile 2>&1); rc=$?
check '[ $rc = 2 ] && [ "$out" = "ckrun: --hostfile needs a file" ]' "--hostfile alone: exit $rc, output: $out"

# No program, or one given by a path that is not an executable file: one line, exit 2.
out=$("$C" -np 2 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "^ckrun: no program to run after -np 2" <<<"$out"' "no program: exit $rc, output: $out"
for pf in "$none:no such file" "$hdir:a folder" "$hdir/fifo:not an executable file"; do
  f=${pf%%:*} why=${pf#*:}
  out=$("$C" -np 2 "$f" 2>&1); rc=$?
  check '[ $rc = 2 ] && [ "$out" = "ckrun: $f: $why" ]' "program $f: exit $rc, output: $out"
done

# The supervisor's options: whole numbers, --min-np within the rank count.
for v in x -1 1.5 ""; do
  out=$("$C" -np 2 --restarts "$v" $none 2>&1); rc=$?
  check '[ $rc = 2 ] && [ "$out" = "ckrun: --restarts needs a whole number (0 to 9999)" ]' "--restarts '$v': exit $rc, output: $out"
done
if command -v mpirun > /dev/null; then
  out=$("$C" -np 2 --min-np 3 --restarts 1 $none 2>&1); rc=$?
  check '[ $rc = 2 ] && [ "$out" = "ckrun: --min-np 3: want 1 to the number of ranks (2)" ]' "--min-np 3 of 2: exit $rc, output: $out"
  # A program that fails is run again, as many times as asked, then its status is ckrun's.
  out=$("$C" -np 1 --restarts 2 /bin/false 2>&1); rc=$?
  check '[ $rc = 1 ] && [ "$(grep -c "^ckrun: the job failed (status 1); restart [12] of 2 on 1 rank, from the start" <<<"$out")" = 2 ] &&
         grep -q "^ckrun: 3 attempts in .* s, .* s of them in the failed ones; last status 1" <<<"$out"' \
        "--restarts 2 /bin/false: exit $rc, output: $out"
fi

out=$("$C" --help 2>&1); rc=$?
check '[ $rc = 0 ] && grep -q "^ckrun — mpirun with the settings" <<<"$out" && grep -q "ckrun is for one machine.$" <<<"$out"' \
      "--help: exit $rc, output: $out"
check '! grep -qE "^(set -u|np=|args=|NP_MAX=)" <<<"$out"' "--help prints code: $(tail -2 <<<"$out")"

if command -v mpirun > /dev/null; then
  # Leading zeros are a decimal number; the program's own -n and --help are its own.
  out=$("$C" -np 02 /bin/echo ran -n 30 --help 2>&1); rc=$?
  check '[ $rc = 0 ] && [ "$(grep -c "^ran -n 30 --help$" <<<"$out")" = 2 ]' "-np 02 echo: exit $rc, output: $out"
else
  echo "mpirun not found: the runs are skipped"
  [ $fail -eq 0 ] && { echo "$pass passed, $fail failed"; exit 77; }
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
