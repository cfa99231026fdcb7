#!/usr/bin/env bash
# collgrade_args.sh COLLGRADE [SRC] — collgrade's own arguments, no MPI run
# needed: the help is the whole comment block at the top of the script (its
# last line too, none of the code after it) and every part kind's description,
# a time limit that is not a whole number of seconds >= 1 stops it with exit 2
# and one message, and so does a malformed lab.conf, naming its file and line.
# With SRC, the integrity part alone on two cheats (tests/labs/cheats: a
# system call as an instruction, symbol tables walked) and on the reference
# ring: the allow list on the object code, in a few seconds.
set -u
G=$1 SRC=${2:-}
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

out=$("$G" --help 2>&1); rc=$?
check '[ $rc = 2 ]' "--help: exit $rc, expected 2"
check 'grep -q "^collgrade — the autograder of the collkit labs" <<<"$out"' "--help: no first line"
check 'grep -q "^3 partial (see above).$" <<<"$out"' "--help: the header's last line is missing"
for k in check integrity paired cost train save; do
  check 'grep -q "^  $k  " <<<"$out"' "--help: the part kind $k is not described"
done
check 'grep -q -- "--time-limit S (or COLLGRADE_TIME_LIMIT=S)" <<<"$out"' "--help: the time limit is not documented"
check '! grep -qE "^(set -u|HERE=|die\\(\\))" <<<"$out"' "--help prints code: $(tail -2 <<<"$out")"

for v in 0 00 -5 abc 1.5 9999999; do
  out=$("$G" 01 --time-limit "$v" 2>&1); rc=$?
  check '[ $rc = 2 ] && grep -q "time-limit.*'"'$v'"'" <<<"$out"' "--time-limit '$v': exit $rc: $out"
done
# A report file that holds something (here the student's own source) is
# refused before anything is built, untouched; a folder too.
notes=$(mktemp)
echo "int my_ring;" > "$notes"
for o in --json --junit --gradescope; do
  out=$("$G" 01 $o "$notes" 2>&1); rc=$?
  check '[ $rc = 2 ] && grep -q -- "$o $notes exists (13 bytes): not written over (give another file, or --overwrite)" <<<"$out"' \
        "$o over an existing file: exit $rc: $out"
  out=$("$G" 01 $o /tmp 2>&1); rc=$?
  check '[ $rc = 2 ] && grep -q -- "$o /tmp is a directory" <<<"$out"' "$o /tmp: exit $rc: $out"
done
out=$("$G" 01 --json /nonexistent/r.json 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q -- "--json /nonexistent/r.json: /nonexistent is not a folder collgrade can write into" <<<"$out"' \
      "--json in a missing folder: exit $rc: $out"
check '[ "$(cat "$notes")" = "int my_ring;" ]' "a refused report changed the file"
rm -f "$notes"
out=$(COLLGRADE_TIME_LIMIT=soon "$G" 01 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "COLLGRADE_TIME_LIMIT.*'"'soon'"'" <<<"$out"' "COLLGRADE_TIME_LIMIT=soon: exit $rc: $out"
# An instructor's malformed lab.conf: one message naming the file and the
# line, exit 2, before anything is built (--file names a file that does not
# exist: reaching it would be a different message).
conf_dir=$(mktemp -d)
trap 'rm -rf "$conf_dir"' EXIT
bad_conf() {   # bad_conf NAME REGEX LINES...
  local name=$1 re=$2 out rc; shift 2
  mkdir -p "$conf_dir/$name"
  printf '%s\n' "$@" > "$conf_dir/$name/lab.conf"
  out=$("$G" "$conf_dir/$name" --file "$conf_dir/none.c" 2>&1); rc=$?
  check '[ $rc = 2 ] && [ $(wc -l <<<"$out") = 1 ] && grep -qE -- "^collgrade: $conf_dir/$name/lab.conf:$re" <<<"$out"' \
        "lab.conf $name: exit $rc: $out"
}
head='file = my_ring.c
algo = my_ring'
bad_conf kind    "4: part b: unknown kind 'chek' \\(known: check, integrity"  "$head" "part a 10 integrity" "part b 10 chek np=2"
bad_conf points  "3: part a: points 'ten': expected a whole number"         "$head" "part a ten integrity"
bad_conf nofile  " no 'file =' line"                                          "algo = my_ring" "part a 10 integrity"
bad_conf fileglob "1: file: '\*' is not a C file's path relative to the lab folder" "file = *" "algo = my_ring" "part a 10 integrity"
bad_conf fileabs "1: file: '/etc/passwd' is not a C file's path"           "file = /etc/passwd" "algo = my_ring" "part a 10 integrity"
bad_conf np0     "3: part a: np=0: expected rank counts"                     "$head" "part a 10 check np=0"
bad_conf npabc   "3: part a: np=1,abc: expected rank counts"                   "$head" "part a 10 check np=1,abc"
bad_conf np_big  "3: part a: np=5000: 5000 ranks is more than 4096"          "$head" "part a 10 check np=5000"
bad_conf dup     "4: part 'a' is given twice"                                "$head" "part a 10 integrity" "part a 10 integrity"
bad_conf option  "3: part a: unknown option 'arg' for a check part"          "$head" "part a 10 check np=2 arg=--quick"
bad_conf key     "3: unknown key 'titel'"                                    "$head" "titel = x" "part a 10 integrity"
bad_conf twice   "3: 'algo' is given twice"                                  "$head" "algo = other" "part a 10 integrity"
bad_conf junk    "3: expected 'KEY = VALUE' or 'part NAME POINTS KIND OPTIONS'"  "$head" "parts a 10 integrity"
bad_conf nokind  "3: a part line is 'part NAME POINTS KIND OPTIONS': this one has no KIND"  "$head" "part a 10"
bad_conf needs   "3: part a: a paired part needs size="                      "$head" "part a 10 paired ref=ring np=2 full=0.8 zero=0.4"
bad_conf full    "3: part a: full=0.3 must be above zero=0.4"                "$head" "part a 10 paired ref=ring np=2 size=4M full=0.3 zero=0.4"
bad_conf algo    "3: part a: algo=my_rign is not one of the lab's algorithms" "$head" "part a 10 check algo=my_rign np=2"
bad_conf noparts " no 'part' lines"                                           "$head"
bad_conf noalgo  " no 'algo =' line"                                          "file = my_ring.c" "part a 10 check np=2"
bad_conf mode    "3: part a: mode=crsh: expected crash, fail, durable, kill or integrity"  "file = my_save.c" "" "part a 10 save mode=crsh"
bad_conf nomode  "2: part a: a save part needs mode="                        "file = my_save.c" "part a 10 save sizes=1"
bad_conf sizes   "2: part a: sizes=1,x: expected sizes in bytes"             "file = my_save.c" "part a 10 save mode=crash sizes=1,x"
bad_conf allow   "3: allow: 'x-y' is not a symbol name"                     "$head" "allow = open x-y" "part a 10 integrity"
bad_conf saveopt "2: part a: unknown option 'np' for a save part"            "file = my_save.c" "part a 10 save mode=crash np=2"
bad_conf crlf    "1: the line ends in a carriage return \\(Windows line endings\\)"  $'file = my_ring.c\r' $'algo = my_ring\r' $'part a 10 integrity\r'
# A comment after a part (with '=' in it) is a comment, not options.
mkdir -p "$conf_dir/comment"
printf '%s\n' "$head" "part a 10 integrity   # np=2 full=1" > "$conf_dir/comment/lab.conf"
out=$("$G" "$conf_dir/comment" --file "$conf_dir/none.c" 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "no file $conf_dir/none.c (--file)" <<<"$out"' "lab.conf with a comment: exit $rc: $out"
# A file lab.conf names that does not exist: the message says lab.conf named it.
out=$("$G" "$conf_dir/comment" 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "no file $conf_dir/comment/my_ring.c, named by $conf_dir/comment/lab.conf" <<<"$out"' "missing file: exit $rc: $out"
# --file with fewer files than lab.conf's file = names.
printf '%s\n' "file = a.c b.c" "algo = x y" "part a 10 integrity" > "$conf_dir/comment/lab.conf"
out=$("$G" "$conf_dir/comment" --file "$conf_dir/none.c" 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q -- "--file names 1 file(s), but .*names 2 (a.c b.c)" <<<"$out"' "--file count: exit $rc: $out"
# --batch: refused without a sandbox, and with the options of one grading
mkdir -p "$conf_dir/subs/a"
out=$(COLLGRADE_SANDBOX=none "$G" 01 --batch "$conf_dir/subs" 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "bubblewrap" <<<"$out" && [ ! -e "$conf_dir/subs.grades" ]' "--batch without a sandbox: exit $rc: $out"
out=$("$G" 01 --batch "$conf_dir/subs" --file x.c 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "do not go with it" <<<"$out"' "--batch with --file: exit $rc: $out"
out=$("$G" 01 --regrade 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q "go with --batch" <<<"$out"' "--regrade alone: exit $rc: $out"
if [ -n "$SRC" ]; then
  mkdir -p "$conf_dir/integ"
  printf '%s\n' "file = my_ring.c" "algo = my_ring" "part integrity 20 integrity" > "$conf_dir/integ/lab.conf"
  sol=$SRC/labs/01-ring/solution/my_ring.c
  for c in syscall dlphdr; do "$SRC/tests/labs/cheats/assemble.sh" "$SRC" $c "$conf_dir/$c.c"; done
  # collkit-cc itself: files and a folder named with quotes, '$', ';', unicode
  odd="$conf_dir/o'dd \$(x) \"q\"; dir"
  mkdir -p "$odd"; cp "$sol" "$odd/my ring;(1) \${x} é.c"
  out=$("$(dirname "$G")/collkit-cc" "$odd/my ring;(1) \${x} é.c" -o "$odd/prog" 2>&1); rc=$?
  check '[ $rc = 0 ] && [ -x "$odd/prog" ]' "collkit-cc on odd names: exit $rc: $(tail -3 <<<"$out")"
  out=$("$G" "$conf_dir/integ" --file "$sol" 2>&1); rc=$?
  check '[ $rc = 0 ] && grep -qE "integrity +20.0 / 20" <<<"$out"' "the reference ring's integrity: exit $rc: $out"
  out=$("$G" "$conf_dir/integ" --file "$conf_dir/syscall.c" 2>&1); rc=$?
  check '[ $rc = 1 ] && grep -qE "integrity +0.0 / 20 +the file uses what this lab forbids: (syscall|svc).* \(a system call written as an instruction\)" <<<"$out"' "inline syscall: exit $rc: $out"
  out=$("$G" "$conf_dir/integ" --file "$conf_dir/dlphdr.c" 2>&1); rc=$?
  check '[ $rc = 1 ] && grep -qE "integrity +0.0 / 20 +the file uses what this lab forbids: .*dl_iterate_phdr.* \(dynamic loading or symbol tables\)" <<<"$out"' "dl_iterate_phdr: exit $rc: $out"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
