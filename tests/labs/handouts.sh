#!/usr/bin/env bash
# handouts.sh SRC BUILD [LAB ...] — every lab's handout runs as written in a
# fresh student kit: the commands of each ```sh block of labs/NN-*/HANDOUT.md,
# in order, in one shell per lab (a later block uses the variables an earlier
# one set, as in a student's terminal), in the kit's root, with the lab's
# reference solution where the student's file goes (the handout's commands
# are written for a file that works; the skeleton's failures are the
# graders' tests, not this one's).
#
# What "runs" means: no command of a block is refused as written — not found
# (127), not executable (126), bad arguments (2, the kit's convention for
# every tool), or a message that says so (unknown option, no such file). A
# command may fail on purpose (a simulated crash, a killed rank, a training
# that ends on its watchdog): its other exit statuses are the handout's
# business and are printed, not judged.
#
# Without LAB arguments every lab is run (minutes: label `handouts`,
# `make test-handouts`); `handouts.sh SRC BUILD 01 06` runs two.
set -u
SRC=$1 B=$2
shift 2
dir=$(mktemp -d)
# HANDOUTS_KEEP=1 keeps the kit and the logs (their folder is printed).
cleanup() { pkill -P $$ 2>/dev/null; [ -n "${HANDOUTS_KEEP:-}" ] && echo "kept: $dir" || rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

K=$dir/kit
"$SRC/scripts/student-kit.sh" "$B" "$K" > "$dir/kit.log" 2>&1 || { echo "FAIL: student-kit.sh"; cat "$dir/kit.log"; exit 1; }

# The blocks of a handout, each followed by a line "#@end-of-block N".
blocks() {
  awk '/^```sh[ \t]*$/ { on = 1; n++; next } /^```/ { if (on) print "#@end-of-block " n; on = 0; next } on' "$1"
}

# One lab: its solution in the kit, its blocks run by one bash whose ERR trap
# and DEBUG trap record each failing simple command with its status.
run_lab() {
  local lab=$1 handout=$K/labs/$1/HANDOUT.md log=$dir/$1.log
  [ -f "$handout" ] || { bad "lab $lab: no HANDOUT.md in the kit"; return; }
  for f in "$SRC/labs/$lab/solution/"*.c; do cp "$f" "$K/labs/$lab/"; done
  # Lab 05 builds on the student's lab 01 ring (its lab.conf names it).
  [ -f "$SRC/labs/01-ring/solution/my_ring.c" ] && cp "$SRC/labs/01-ring/solution/my_ring.c" "$K/labs/01-ring/"
  {
    # Every failing command is logged with its status; a block goes on
    # after a failure, as a student pasting it would.
    echo 'trap '\''rc=$?; echo "#@status $rc: $BASH_COMMAND" >&2'\'' ERR'
    blocks "$handout" | sed 's/^#@end-of-block \(.*\)/echo "#@block \1 done" >\&2/'
  } > "$dir/$lab.sh"
  local nblocks
  nblocks=$(grep -c '^#@end-of-block' <(blocks "$handout"))
  [ "$nblocks" -gt 0 ] || { bad "lab $lab: no \`\`\`sh block in the handout"; return; }
  local t0=$SECONDS
  (cd "$K" && COLLKIT_TIMEOUT=${COLLKIT_TIMEOUT:-60} timeout -k 10 900 bash "$dir/$lab.sh") > "$log" 2>&1 < /dev/null
  local rc=$? refused
  # make's own 2 is any failed recipe (a grade below 100 under load): only
  # its "No rule" is a command refused.
  refused=$(grep -E '^#@status (2|126|127):' "$log" | grep -v '^#@status 2: make ')
  refused+=$(grep -iE 'command not found|unknown option|unrecognized option|invalid option|No such file or directory|No rule to make target|unable to find the specified executable' "$log" |
             grep -v '^#@status' | head -5)
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    bad "lab $lab: the handout's commands did not end within 900 s"; tail -20 "$log"
  elif [ "$(grep -c '^#@block .* done' "$log")" -ne "$nblocks" ]; then
    bad "lab $lab: the shell stopped before the last block (rc $rc)"; tail -20 "$log"
  elif [ -n "$refused" ]; then
    bad "lab $lab: commands refused as written:"; echo "$refused" | sed 's/^/    /'
  else
    ok
  fi
  echo "lab $lab: $nblocks blocks in $((SECONDS - t0)) s; statuses other than 0: $(grep -c '^#@status' "$log")"
  grep '^#@status' "$log" | sed 's/^#@status /    /' | head -10
}

labs=("$@")
[ ${#labs[@]} -gt 0 ] || labs=($(cd "$SRC/labs" && ls -d [0-9][0-9]-*/ | tr -d /))
for lab in "${labs[@]}"; do
  case $lab in [0-9][0-9]) lab=$(cd "$SRC/labs" && ls -d "$lab"-*/ 2>/dev/null | tr -d / | head -1) ;; esac
  [ -n "$lab" ] && [ -d "$SRC/labs/$lab" ] || { bad "no lab $lab"; continue; }
  run_lab "$lab"
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
