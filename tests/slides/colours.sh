#!/usr/bin/env bash
# colours.sh SRC — one colour per algorithm in every picture. collectives/algos/colors.txt,
# beside the registry, gives each algorithm its colour; this fails when:
#   - the table gives one algorithm two colours, or one colour to two algorithms;
#   - an algorithm of the registry (algos.def, reduce_scatter.def, allgather.def) has none;
#   - colldraw (draw/*.c) uses a table colour for something else (a colour means one thing);
#   - a gnuplot script (plots/, slides/) draws a line per algorithm in a colour not taken
#     from the table (acol(), plots/common.gp): by its position (lc i), or from a list of its own;
#   - gnuplot, where installed, does not give a name and its NAME@shm the table's colour.
# colours.sh --broken SRC: breaks a copy in each of those ways and expects every one caught.
set -u
if [ "${1:-}" = --broken ]; then
  SRC=$2 me=$(cd "$(dirname "$0")" && pwd)/colours.sh
  dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
  fails=0
  fresh() { rm -rf "$dir/src"; mkdir -p "$dir/src/collectives"; cp -r "$SRC/collectives/algos" "$dir/src/collectives/"
            cp -r "$SRC/plots" "$SRC/slides" "$SRC/draw" "$dir/src/"; }
  check() {   # check WHAT REGEX: the broken copy must fail, saying REGEX
    out=$("$me" "$dir/src" 2>&1); rc=$?
    if [ $rc = 0 ]; then echo "FAIL: $1: the colour test passed"; fails=$((fails + 1))
    elif ! echo "$out" | grep -Eq -- "$2"; then echo "FAIL: $1: no '$2' in:"; echo "$out" | head; fails=$((fails + 1))
    else echo "ok: $1: $(echo "$out" | grep -E -m1 -- "$2")"; fi
  }
  fresh; out=$("$me" "$dir/src" 2>&1) || { echo "FAIL: the unbroken copy fails:"; echo "$out"; exit 1; }
  fresh; echo "ring #123456" >> "$dir/src/collectives/algos/colors.txt"
  check "one algorithm, two colours" "ring has two colours"
  fresh; sed -i 's/^rd  *#.*/rd               #1b9e77/' "$dir/src/collectives/algos/colors.txt"
  check "one colour, two algorithms" "#1b9e77 is the colour of both"
  fresh; sed -i '/^tree2 /d' "$dir/src/collectives/algos/colors.txt"
  check "an algorithm without a colour" "tree2 .*has no colour"
  fresh; sed -i 's/lc rgb acol(word(algos, i), i)/lc i/' "$dir/src/plots/busbw.gp"
  check "a plot colouring algorithms by position" "busbw.gp: .*not from the table"
  fresh; printf 'array col[2] = ["#111111", "#222222"]\nplot for [i = 1:words(algos)] f using 1:2 lc rgb col[i] title word(algos, i)\n' >> "$dir/src/slides/model.gp"
  check "a plot with colours of its own" "model.gp: .*not from the table"
  fresh; sed -i 's/"#59a14f"/"#1b9e77"/' "$dir/src/draw/gantt.c"
  check "colldraw using an algorithm's colour" "gantt.c uses #1b9e77, the colour of ring"
  [ $fails = 0 ] && echo PASS || { echo "$fails breakages not caught"; exit 1; }
  exit 0
fi
SRC=$1
T=$SRC/collectives/algos/colors.txt
bad=0
say() { echo "FAIL: $*"; bad=1; }
[ -s "$T" ] || { echo "FAIL: no $T"; exit 1; }
# the table: NAME #RRGGBB, each name once, each colour once
while read -r why; do say "$why"; done < <(awk '!/^#/ && NF {
    if (NF != 2 || $2 !~ /^#[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F]$/) { print FILENAME " line " FNR ": not NAME #RRGGBB: " $0; next }
    c = tolower($2)
    if ($1 in col && col[$1] != c) print $1 " has two colours: " col[$1] " and " c " (" FILENAME ")"
    else if (c in who && who[c] != $1) print c " is the colour of both " who[c] " and " $1 " (" FILENAME ")"
    col[$1] = c; who[c] = $1 }' "$T")
# every registry name has one
for def in algos reduce_scatter allgather; do
  for a in $(sed -n 's/^CK_ALGO(\([a-z_0-9]*\)).*/\1/p' "$SRC/collectives/algos/$def.def"); do
    awk -v a="$a" '!/^#/ && $1 == a { f = 1 } END { exit !f }' "$T" || say "$a ($def.def) has no colour in $T"
  done
done
# colldraw's own colours (ranks, event kinds) are none of the algorithms'
while read -r name c; do
  for f in "$SRC"/draw/*.c; do
    ! grep -qi "\"$c\"" "$f" || say "$(basename "$f") uses $c, the colour of $name, for something else"
  done
done < <(awk '!/^#/ && NF == 2 { print $1, tolower($2) }' "$T")
# every gnuplot line drawn per algorithm takes its colour from acol(): a plot statement (its
# continuation lines joined) is cut at each "for [", and a part iterating over algos must say acol(
for gp in "$SRC"/plots/*.gp "$SRC"/slides/*.gp; do
  awk -v f="$(basename "$gp")" '
    { line = $0; sub(/#.*/, "", line) }
    stmt != "" || line ~ /^[ \t]*plot/ { stmt = stmt " " line
      if (line ~ /\\[ \t]*$/) next
      n = split(stmt, part, /for \[/)
      for (i = 2; i <= n; i++) if (part[i] ~ /algos/ && part[i] !~ /acol\(/)
        printf "%s: a line per algorithm in a colour not from the table (write lc rgb acol(NAME, i)): %s\n", f, substr(part[i], 1, 90)
      stmt = "" }' "$gp"
done > "${TMPDIR:-/tmp}/colours.$$"
while read -r why; do say "$why"; done < "${TMPDIR:-/tmp}/colours.$$"; rm -f "${TMPDIR:-/tmp}/colours.$$"
# and gnuplot gives each name, with or without @shm, the table's colour
if command -v gnuplot > /dev/null; then
  got=$(cd "$SRC" && gnuplot -e "load 'plots/common.gp'; do for [i = 1:words(algo_names)] { a = word(algo_names, i); print a.' '.acol(a, i).' '.acol(a.'@shm', i) }" 2>&1)
  want=$(awk '!/^#/ && NF == 2 { print $1, $2, $2 }' "$T")
  [ "$got" = "$want" ] || say "gnuplot's acol() does not give the table's colours:
$(diff <(echo "$want") <(echo "$got") | head)"
fi
[ $bad = 0 ] && echo "PASS: $(grep -c '^[a-z]' "$T") algorithms, one colour each, in every plot"
[ $bad = 0 ]
