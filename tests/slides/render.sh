#!/usr/bin/env bash
# render.sh SRC BUILD — every deck builds and every page renders: pdftoppm
# turns each page into an image, and each page carries text. Skipped (77)
# where the slide tools are not installed (make slides installs them).
set -u
SRC=$1 B=$2
for t in pandoc pdflatex pdftoppm pdftotext pdfinfo gnuplot; do command -v $t > /dev/null || { echo "skip: no $t (make slides installs it)"; exit 77; }; done
kpsewhich beamer.cls > /dev/null 2>&1 && kpsewhich pgfmath.sty > /dev/null 2>&1 || { echo "skip: no beamer"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0; fail=0
SLIDES_NO_INSTALL=1 "$SRC/scripts/slides.sh" "$B" "$dir" > "$dir/log" 2>&1 || { echo "FAIL: slides.sh"; cat "$dir/log"; exit 1; }
ndecks=$(ls "$SRC"/slides/[0-9][0-9]-*.md | wc -l)
for md in "$SRC"/slides/[0-9][0-9]-*.md; do
  pdf=$dir/$(basename "$md" .md).pdf
  pages=$(pdfinfo "$pdf" 2>/dev/null | awk '/^Pages:/ { print $2 }')
  if [ -z "$pages" ] || [ "$pages" -lt 2 ]; then echo "FAIL: $pdf has no pages"; fail=$((fail + 1)); continue; fi
  n=0
  for i in $(seq 1 "$pages"); do
    # the page renders to an image, and carries text (a title at least)
    if pdftoppm -r 30 -png -f "$i" -l "$i" "$pdf" "$dir/p" 2>/dev/null && [ -s "$(ls "$dir"/p-*.png 2>/dev/null | head -1)" ] &&
       [ -n "$(pdftotext -f "$i" -l "$i" "$pdf" - 2>/dev/null | tr -d '[:space:]')" ]; then n=$((n + 1))
    else echo "FAIL: $(basename "$pdf") page $i does not render"; fi
    rm -f "$dir"/p-*.png
  done
  [ "$n" = "$pages" ] && pass=$((pass + 1)) || { echo "FAIL: $(basename "$pdf"): $n of $pages pages rendered"; fail=$((fail + 1)); }
done
[ $((pass + fail)) = "$ndecks" ] || { echo "FAIL: $ndecks decks, $((pass + fail)) checked"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
