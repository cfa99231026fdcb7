#!/usr/bin/env bash
# broken.sh SRC BUILD — the slide test can fail: a copy of a deck is broken
# on purpose, one way at a time, and render.sh must fail on it, naming the fault:
# a missing image, a title-only page, a code line running off the page, a pandoc
# warning, a slide that LaTeX splits over two pages, a model time or a measured figure typed by hand,
# a model number the collbench CSV does not hold, a picture whose caption names another
# command than the one that drew it, a command broken inside an argument (a code line
# continued mid-argument, a line LaTeX wraps between an option and its value), a page without
# its frame number, text in a picture under 8 pt as placed on the page, and a make slides that cannot build a second time over its own outputs. Skipped (77) like render.sh.
set -u
SRC=$1 B=$2
R=$SRC/tests/slides/render.sh
deck=06-faults   # no pictures: make slides skips drawing them for it alone
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src/scripts" "$dir/src/tests/slides"
cp "$SRC/scripts/slides.sh" "$dir/src/scripts/"
cp -r "$SRC/slides" "$SRC/plots" "$dir/src/"
mkdir -p "$dir/src/collectives/algos" && cp "$SRC/collectives/algos/colors.txt" "$dir/src/collectives/algos/"   # plots/common.gp
mkdir -p "$dir/src/labs/06-faults" && cp -r "$SRC/labs/06-faults/solution" "$dir/src/labs/06-faults/"   # deck 06's recipe
cp "$R" "$dir/src/tests/slides/"
fails=0
check() {   # check WHAT REGEX TEXT: the deck with TEXT appended must fail, saying REGEX
  cp "$SRC/slides/$deck.md" "$dir/src/slides/$deck.md"
  printf '%s\n' "$3" >> "$dir/src/slides/$deck.md"
  out=$("$dir/src/tests/slides/render.sh" "$dir/src" "$B" "$deck" 2>&1); rc=$?
  if [ $rc = 77 ]; then echo "$out"; exit 77; fi
  if [ $rc = 0 ]; then echo "FAIL: $1: the slide test passed"; fails=$((fails + 1))
  elif ! echo "$out" | grep -Eq -- "$2"; then echo "FAIL: $1: no '$2' in:"; echo "$out" | head -20; fails=$((fails + 1))
  else echo "ok: $1: $(echo "$out" | grep -E -m1 -- "$2")"; fi
}
# the unbroken copy passes (so the failures below are the breakages')
out=$("$dir/src/tests/slides/render.sh" "$dir/src" "$B" "$deck" 2>&1); rc=$?
[ $rc = 77 ] && { echo "$out"; exit 77; }
[ $rc = 0 ] || { echo "FAIL: the unbroken copy fails:"; echo "$out"; exit 1; }
check "missing image" "nosuch\.png" "
## A picture

![the ring at four ranks](fig/nosuch.png)"
check "title-only page" "page [0-9]+ holds only its title: Nothing below" "
## Nothing below"
long=$(printf 'x%.0s' $(seq 1 300))
check "line off the page" "overfull boxes above 5 pt" "
## A long line

\`\`\`
$long
\`\`\`"
check "pandoc warning" "pandoc warnings: .*Duplicate link reference" "
## Links

See [the ring][r].

[r]: https://example.org/a
[r]: https://example.org/b"
many=$(for i in $(seq 1 60); do echo "- item $i"; done)
check "slide split over pages" "[0-9]+ pages for [0-9]+ slides and a title page" "
## Many {.allowframebreaks}

$many"
check "a picture captioned with another command" "drawn by 'colldraw --algo ring --np 4 --count 8'" "
## The ring, drawn

![](fig/ring4/frame-01.pdf){height=60%}

\`colldraw --algo ring --np 8 --count 8\`, after step 0."
check "a model time and a measured figure typed by hand" "typed by hand.*99\.9 ms 6\.3e-8" "
## Cost, typed

- 64 MiB at p = 16: **99.9 ms**, off by at most 6.3e-8"
# a picture shrunk until its type is under 8 pt as placed: a colldraw SVG (its font-size
# against its viewBox) and a gnuplot PNG (the font it was given against its pixels)
check "a drawing shrunk on its page" "page [0-9]+: fig/naive4/frame-03\.pdf: [0-7]\.[0-9] pt" "
## The naive all-reduce, small

![](fig/naive4/frame-03.pdf){height=12%}

\`colldraw --algo naive --np 4 --count 8\`"
check "a plot shrunk on its page" "page [0-9]+: fig/model-p16\.png: [0-7]\.[0-9] pt" "
## The model, small

![](fig/model-p16.png){height=12%}"
check "a model number the CSV does not have" "no such model value" "
## Cost, filled

- 64 MiB at p = 16: **{{model ring 16 12345 ms}}**"
check "a code line ending inside an argument" "code line: .*--features" "
## A command, continued

\`\`\`
tagtrain --algo ring --features \\
    4096 --hidden 64
\`\`\`"
# a command wrapped by LaTeX between an option and its value: slides.sh's no-break spaces
# taken out of the copy, a paragraph of option pairs wraps somewhere inside one
sed -i 's/nobreak "\$OUT\/\$name.filled.md"/cat "$OUT\/$name.filled.md"/' "$dir/src/scripts/slides.sh"
grep -q 'cat "$OUT/$name.filled.md"' "$dir/src/scripts/slides.sh" || { echo "FAIL: slides.sh has no nobreak step to take out"; fails=$((fails + 1)); }
opts=$(for i in $(seq 1 12); do printf -- '--option-%s value-%s ' "$i" "$i"; done)
check "a command wrapped inside an argument" "page [0-9]+: .*a line ends inside the argument" "
## A long command

\`tagtrain $opts\`"
cp "$SRC/scripts/slides.sh" "$dir/src/scripts/"
# a page without its frame number: the footline taken out of the copy's preamble
sed -i '/setbeamertemplate{footline}/d' "$dir/src/slides/preamble.tex"
check "a page without a frame number" "page [0-9]+ has no frame number" ""
cp "$SRC/slides/preamble.tex" "$dir/src/slides/"
# make slides refusing to write over its own outputs on a second build (collbench keeps an
# existing CSV or trace unless told --overwrite)
sed -i 's/ --overwrite//' "$dir/src/scripts/slides.sh"
cp "$SRC/slides/$deck.md" "$dir/src/slides/$deck.md"
out=$(SLIDES_REBUILD=1 "$dir/src/tests/slides/render.sh" "$dir/src" "$B" "$deck" 2>&1); rc=$?
if [ $rc = 0 ]; then echo "FAIL: a second build: the slide test passed"; fails=$((fails + 1))
elif ! echo "$out" | grep -q "does not build $deck a second time"; then
  echo "FAIL: a second build: no 'a second time' in:"; echo "$out" | head -20; fails=$((fails + 1))
else echo "ok: a second build: $(echo "$out" | grep -m1 'a second time')"; fi
cp "$SRC/scripts/slides.sh" "$dir/src/scripts/"
[ $fails = 0 ] && echo PASS || { echo "$fails breakages not caught"; exit 1; }
