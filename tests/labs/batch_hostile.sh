#!/usr/bin/env bash
# batch_hostile.sh COLLGRADE SRC — collgrade --batch on honest submissions
# beside hostile ones: a 1 GB file (sparse), 20 000 files, a disk filler, a
# memory filler, a fork bomb, two folders whose IDs could collide, a newline
# and a leading '=' in a folder's name. Every honest one graded right; every
# hostile one refused or capped, its reason named in the gradebook; the
# gradebook safe in a spreadsheet; nothing outside the batch's folders
# changed (the tree around them checksummed); nothing left running, and the
# machine still able to start processes and write files (the limits held).
# Skips (77) where bubblewrap cannot run.
set -u
G=$1 SRC=$2
. "$(dirname "$0")/sandbox_lib.sh"
export GRADE_MARK="collgrade-hostile-$$-$RANDOM"
# Small limits, so that every hostile submission meets one within seconds.
export COLLGRADE_NPROC=64 COLLGRADE_DISK_MB=256 COLLGRADE_MEM_MB=1024 COLLGRADE_MAX_FILES=2000 COLLGRADE_MAX_MB=256
batch_lab
declare -A want why   # folder -> expected score; -> what its gradebook note must say
sub() {   # sub FOLDER SCORE SOURCE [NOTE]
  mkdir -p "$T/subs/$1"
  case $3 in SOL) cp "$SOL" "$T/subs/$1/my_ring.c" ;; SKEL) cp "$SKEL" "$T/subs/$1/my_ring.c" ;;
    *) "$SRC/tests/labs/cheats/assemble.sh" "$SRC" "$3" "$T/subs/$1/my_ring.c" ;; esac
  want[$1]=$2 why[$1]=${4:-}
}
# Honest work, under plain and hostile names (60 + 20; the skeleton 30 + 10).
sub alice 80.0 SOL
sub bob 40.0 SKEL
sub $'new\nline' 80.0 SOL
sub '=HYPERLINK("x")' 40.0 SKEL
sub 'a b' 80.0 SOL
sub 'a_b' 40.0 SKEL   # the same safe form as "a b": IDs must differ
# Refused before anything is copied: too large, too many files.
sub big 0.0 SOL "holds 1024 MB, more than 256 MB (COLLGRADE_MAX_MB): not graded"
truncate -s 1G "$T/subs/big/data.bin"
sub many 0.0 SOL "more than 2000 files (COLLGRADE_MAX_FILES): not graded"
mkdir "$T/subs/many/f" && (cd "$T/subs/many/f" && seq 1 20000 | xargs touch)
# Capped while graded (a constructor voids the work: 0).
sub diskfill 0.0 diskfill "limits reached: disk: a run wrote more than 256 MB (COLLGRADE_DISK_MB)"
sub memfill 0.0 hog "limits reached: memory: a process of a run held"
sub forkbomb 0.0 forkbomb "limits reached: processes: a run started more than 64 at once (COLLGRADE_NPROC)"
n=${#want[@]}
# The tree around the batch: every file but the grades', and the source tree.
snap() { (cd "$T" && find . -path ./grades -prune -o -path ./subs/many -prune -o -type f ! -name before ! -name after -print0 | LC_ALL=C sort -z | xargs -0 md5sum
         find subs/many | wc -l
         cd "$SRC" && git status --porcelain --untracked-files=no ); }
snap > "$T/before"
# The grader's own temporary files in a folder of the test's: none left after.
mkdir "$T/tmp"
start=$(date +%s)
out=$(TMPDIR=$T/tmp "$G" "$T/lab" --batch "$T/subs" --out "$T/grades" --time-limit 20 2>&1); rc=$?
echo "$out"
echo "(the batch: $(($(date +%s) - start)) s)"
check '[ $rc = 0 ]' "collgrade --batch: exit $rc"
book=$T/grades/gradebook.csv
check '[ -f "$book" ]' "no gradebook"
python3 - "$book" <<'PY' && pass=$((pass + 1)) || { echo "FAIL: the gradebook is not safe in a spreadsheet"; fail=$((fail + 1)); }
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8")))
assert rows[0] == ["student", "id", "score", "max", "partial", "note"], rows[0]
assert len({r[1] for r in rows[1:]}) == len(rows) - 1, "two submissions share an ID"
for r in rows[1:]:
    for cell in r:
        assert cell[:1] not in ("=", "+", "-", "@"), r
        assert not any(ord(c) < 0x20 or ord(c) == 0x7f for c in cell), r
PY
for s in "${!want[@]}"; do
  row=$(python3 - "$book" "$s" <<'PY'
import csv, sys
book, name = sys.argv[1], sys.argv[2]
shown = "".join(c if 0x20 <= ord(c) != 0x7f else "\\n" if c == "\n" else "\\x%02x" % ord(c) for c in name)
shown = "'" + shown if shown[:1] in "=+-@" else shown
for r in csv.reader(open(book, encoding="utf-8")):
    if r[0] == shown:
        print(r[2] + "|" + r[5])
PY
)
  check '[ "${row%%|*}" = "${want[$s]}" ]' "submission '$s': score '${row%%|*}', expected ${want[$s]}"
  [ -z "${why[$s]}" ] || check 'grep -Fq -- "${why[$s]}" <<<"${row#*|}"' "submission '$s': its note '${row#*|}' does not say: ${why[$s]}"
done
check '[ $(($(wc -l < "$book") - 1)) = $n ]' "the gradebook has $(($(wc -l < "$book") - 1)) rows, not $n"
snap > "$T/after"
check 'cmp -s "$T/before" "$T/after"' "files outside the batch's grades changed: $(diff "$T/before" "$T/after" | head -5)"
check '[ -z "$(ls -A "$T/tmp")" ]' "the batch left files behind in its TMPDIR: $(ls -A "$T/tmp" | head -3)"
nleft=0
for f in /proc/[0-9]*/environ; do p=${f#/proc/}; p=${p%/environ}
  [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] || ! grep -qzx "GRADE_MARK=$GRADE_MARK" "$f" 2>/dev/null || nleft=$((nleft + 1)); done
check '[ $nleft = 0 ]' "$nleft processes of the batch still running"
check '[ "$(sh -c "echo alive")" = alive ] && echo ok > "$T/alive" && [ -s "$T/alive" ]' "the machine cannot start a process or write a file"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
