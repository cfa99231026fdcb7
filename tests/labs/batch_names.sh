#!/usr/bin/env bash
# batch_names.sh COLLGRADE SRC — collgrade --batch against folder names that
# once lost or forged grades: a newline (split in two, never graded), an
# escape sequence (a progress line redrawn), a leading =, +, - or @ (a
# formula in the gradebook), names whose safe forms are the same, a folder
# named as another's ID, names that differ in case only. Every one graded
# right, under an ID of its own; no control character in the progress lines,
# the gradebook or the reports; no gradebook cell a spreadsheet reads as a
# formula. And the canary: a batch whose reference solution does not get
# full marks stops before any student is graded, exit 2, saying why; a lab
# without a reference needs --canary or --no-canary. Skips (77) where
# bubblewrap cannot run.
set -u
G=$1 SRC=$2
. "$(dirname "$0")/sandbox_lib.sh"
batch_lab
# NAME SOURCE SCORE, one a line (a name with a newline is written \n here)
subs='=HYPERLINK("x")|SOL|80.0
+1+2|SKEL|40.0
-2+3|SOL|80.0
@SUM(A1)|SKEL|40.0
two\nlines|SOL|80.0
two|SKEL|40.0
lines|SKEL|40.0
esc\e[2J\e[Hall 100 of 100|SKEL|40.0
a b|SOL|80.0
a_b|SKEL|40.0
a?b|SKEL|40.0
Alice|SOL|80.0
alice|SKEL|40.0'
while IFS='|' read -r name what score; do
  name=$(printf '%b' "$name")
  mkdir -p "$T/subs/$name"
  if [ "$what" = SOL ]; then cp "$SOL" "$T/subs/$name/my_ring.c"; else cp "$SKEL" "$T/subs/$name/my_ring.c"; fi
done <<<"$subs"
# A folder named as the ID "a b" gets, with the reference in it.
id=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from grader.batch import student_id; print(student_id("a b"))' "$(dirname "$G")")
mkdir -p "$T/subs/$id"; cp "$SKEL" "$T/subs/$id/my_ring.c"
out=$("$G" "$T/lab" --batch "$T/subs" --out "$T/grades" --time-limit 20 2>&1); rc=$?
echo "$out"
check '[ $rc = 0 ]' "collgrade --batch: exit $rc"
check 'grep -q "the canary: 80.0 / 80" <<<"$out"' "the canary was not graded first"
check '! grep -q $'"'"'\e'"'"' <<<"$out"' "an escape character reached the progress lines"
check '[ $(ls "$T/grades/students/"*.json | wc -l) = 14 ]' "$(ls "$T/grades/students/"*.json | wc -l) reports, not 14"
check '! grep -rqP "[\x00-\x08\x0b-\x1f\x7f]" "$T/grades/gradebook.csv" "$T/grades/students"' "a control character in the gradebook or a report"
python3 - "$T/grades/gradebook.csv" "$subs" "$id" <<'PY' && pass=$((pass + 1)) || { echo "FAIL: the gradebook"; fail=$((fail + 1)); }
import codecs, csv, sys
book, subs, other = sys.argv[1], sys.argv[2], sys.argv[3]
want = {}
for line in subs.split("\n"):
    name, what, score = line.split("|")
    want[codecs.decode(name.replace("\\e", "\x1b"), "unicode_escape")] = score
want[other] = "40.0"
def shown(n):   # the name as the gradebook writes it
    s = "".join(c if 0x20 <= ord(c) != 0x7f else "\\x%02x" % ord(c) if c != "\n" else "\\n" for c in n)
    return "'" + s if s[:1] in "=+-@" else s
rows = list(csv.reader(open(book, encoding="utf-8")))
assert rows[0] == ["student", "id", "score", "max", "partial", "note"], rows[0]
got = {r[0]: r for r in rows[1:]}
assert len(rows) - 1 == len(want) == 14, (len(rows), len(want))
assert len({r[1] for r in rows[1:]}) == 14, "two submissions share an ID"
for n, score in want.items():
    r = got[shown(n)]
    assert r[2] == score, (n, r)
for r in rows[1:]:
    for cell in r:
        assert cell[:1] not in ("=", "+", "-", "@"), r
PY
# A canary that is not full marks (here the skeleton): nothing graded, exit 2.
mkdir -p "$T/bad"; cp "$SKEL" "$T/bad/my_ring.c"
out=$("$G" "$T/lab" --batch "$T/subs" --out "$T/grades2" --canary "$T/bad" --time-limit 20 2>&1); rc=$?
echo "$out"
check '[ $rc = 2 ] && grep -q "the canary, the lab.s reference solution, scored 40.0 / 80" <<<"$out"' "a failing canary: exit $rc"
check '[ ! -e "$T/grades2/gradebook.csv" ] && [ -z "$(ls "$T/grades2/students")" ]' "a student was graded after a failing canary"
# No reference and no --canary: refused, and said how to go on.
rm -r "$T/lab/solution"
out=$("$G" "$T/lab" --batch "$T/subs" --out "$T/grades3" 2>&1); rc=$?
check '[ $rc = 2 ] && grep -q -- "--canary DIR" <<<"$out" && [ -z "$(ls "$T/grades3/students" 2>/dev/null)" ]' "no reference: exit $rc: $out"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
