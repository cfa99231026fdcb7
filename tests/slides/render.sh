#!/usr/bin/env bash
# render.sh SRC BUILD [DECK] — `make slides` builds, and no page is broken. Per deck:
#   - pandoc printed no warning (NAME.pandoc.log is empty);
#   - LaTeX reported no overfull box above 5 pt (a line or a table off the page);
#   - the PDF has one page per slide of the source (its "## " headings, outside code
#     blocks) plus the title page: a slide split in two, or one lost, shows;
#   - every image the source names exists (and pdflatex, halting on errors, found it), and a
#     picture of an algorithm (fig/NAME/frame-NN, fig/NAME/graph) comes with the colldraw command that drew it;
#   - no model time is typed by hand: "15.8 ms" in a source is written {{model ring 16 67108864 ms}}
#     and filled in by make slides from the CSV of the collbench command the slide names; nor a
#     measured ratio ("6.3e-8": {{measured KEY}}, which make slides measures);
#   - every page renders to an image, and every page but the title page carries more
#     than its title: a line of text below it or an image;
#   - make slides builds a second time over its own outputs (a deck is rebuilt after each edit).
# DECK (e.g. 00-alpha-beta) checks that deck only (broken.sh uses it on broken copies).
# Skipped (77) where the slide tools are not installed (make slides installs them).
set -u
SRC=$1 B=$2 ONLY=${3:-}
for t in pandoc pdflatex pdftoppm pdftotext pdfinfo pdfimages gnuplot rsvg-convert; do command -v $t > /dev/null || { echo "skip: no $t (make slides installs it)"; exit 77; }; done
kpsewhich beamer.cls > /dev/null 2>&1 && kpsewhich pgfmath.sty > /dev/null 2>&1 || { echo "skip: no beamer"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0; fail=0
SLIDES_ONLY=$ONLY SLIDES_NO_INSTALL=1 "$SRC/scripts/slides.sh" "$B" "$dir" > "$dir/log" 2>&1 || { echo "FAIL: slides.sh"; cat "$dir/log"; exit 1; }
# A deck is rebuilt after every edit: make slides must build again over its own outputs (the
# model CSV, the trace). Checked on one deck that draws no pictures (seconds, not a full build):
# the whole run when no DECK is named, or when SLIDES_REBUILD=1 asks (broken.sh).
if [ -z "$ONLY" ] || [ "${SLIDES_REBUILD:-0}" = 1 ]; then
  again=$ONLY
  [ -n "$again" ] || again=$(grep -L '](fig/' "$SRC"/slides/[0-9][0-9]-*.md | head -1 | xargs -r basename -s .md)
  if [ -n "$again" ]; then
    SLIDES_ONLY=$again SLIDES_NO_INSTALL=1 "$SRC/scripts/slides.sh" "$B" "$dir" > "$dir/log2" 2>&1 ||
      { echo "FAIL: slides.sh does not build $again a second time over its own outputs:"; cat "$dir/log2"; exit 1; }
  fi
fi
# textsizes LOG DIR...: "page N: FILE: X pt (...)" for each picture in LOG whose smallest text
# is under 8 pt as placed (FILE found under the first DIR that has it); a picture whose
# size cannot be read is named too
textsizes() {
  local log=$1 page file w f d src minfs vbw png; shift
  grep '^ckfig: page ' "$log" | awk '!seen[$0]++ { sub(/pt$/, "", $5); print $3, $4, $5 }' |
  while read -r page file w; do
    f=""; for d in "$@"; do [ -f "$d/$file" ] && { f=$d/$file; break; }; done
    [ -n "$f" ] || { echo "page $page: $file: not found"; continue; }
    case $f in
      *.pdf) src=${f%.pdf}.svg
        [ -f "$src" ] || { echo "page $page: $file: no SVG beside it to read its type from"; continue; }
        # font-size="12" or font-size:12px, in the SVG's own units (the viewBox's)
        minfs=$(grep -Eo 'font-size(="|: *)[0-9.]+' "$src" | grep -Eo '[0-9.]+$' | sort -g | head -1)
        vbw=$(tr '\n' ' ' < "$src" | grep -Eo '<svg[^>]*>' | head -1 |
              sed -nE 's/.*viewBox="[-0-9. ]*[ ,]+[-0-9.]+[ ,]+([0-9.]+)[ ,]+[0-9.]+".*/\1/p; t; s/.* width="([0-9.]+)(px)?".*/\1/p')
        [ -n "$minfs" ] && [ -n "$vbw" ] || { echo "page $page: $file: no font-size or width in $(basename "$src")"; continue; }
        awk -v p="$page" -v f="$file" -v fs="$minfs" -v w="$w" -v vb="$vbw" 'BEGIN { pt = fs * w / vb
          if (pt < 8) printf "page %s: %s: %.1f pt (font-size %s of a %s wide viewBox, placed %.0f pt wide)\n", p, f, pt, fs, vb, w }' ;;
      *.png)
        [ -s "$f.font" ] || { echo "page $page: $file: no $file.font (the smallest type gnuplot was given)"; continue; }
        png=$(od -An -tu1 -j16 -N4 "$f" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
        awk -v p="$page" -v f="$file" -v fs="$(cat "$f.font")" -v w="$w" -v px="$png" 'BEGIN { pt = fs * 96 / 72 * w / px
          if (pt < 8) printf "page %s: %s: %.1f pt (gnuplot font %s on %d px, placed %.0f pt wide)\n", p, f, pt, fs, px, w }' ;;
      *) echo "page $page: $file: neither an SVG's PDF nor a gnuplot PNG" ;;
    esac
  done
}
decks=$(ls "$SRC"/slides/[0-9][0-9]-*.md)
[ -z "$ONLY" ] || decks=$SRC/slides/$ONLY.md
for md in $decks; do
  name=$(basename "$md" .md)
  pdf=$dir/$name.pdf
  bad=0
  say() { echo "FAIL: $name: $*"; bad=1; }
  [ ! -s "$dir/$name.pandoc.log" ] || say "pandoc warnings: $(cat "$dir/$name.pandoc.log")"
  # "Overfull \hbox (12.3pt too wide) in paragraph at lines 5--5" and the text of the line after it
  over=$(awk '/^Overfull \\[hv]box \(/ { v = $3; sub(/^\(/, "", v); sub(/pt$/, "", v);
                if (v + 0 > 5) { getline t; print $0 " :: " t } }' "$dir/$name.latex.log")
  [ -z "$over" ] || say "overfull boxes above 5 pt:
$over"
  # a model time or a measured figure (a ratio such as 6.3e-8) typed by hand instead of filled
  # in by make slides ({{model ALGO P BYTES ms}}, {{measured KEY}}); a tolerance such as 1e-5 is
  # an option's value, not a figure
  typed=$(awk '/^```/ { code = !code } !code' "$md" | grep -Eo '[0-9]+\.[0-9]+ (ms|µs)|[0-9]\.[0-9]+e[-+]?[0-9]+' | head -3 | tr '\n' ' ')
  [ -z "$typed" ] || say "model times or measured figures typed by hand (write {{model ALGO P BYTES ms}}, {{measured KEY}}): $typed"
  for img in $(grep -o '!\[[^]]*\]([^)]*)' "$md" | sed 's/.*](\([^) ]*\).*/\1/'); do
    [ -f "$dir/$img" ] || [ -f "$SRC/slides/$img" ] || say "image $img is missing"
  done
  # a picture of an algorithm names the command that drew it: the colldraw arguments
  # slides.sh draws fig/NAME with must be written in the deck
  for f in $(grep -Eo '\]\(fig/[^/)]*/(frame-|graph[.])' "$md" | sed -E 's,\]\(fig/,,; s,/(frame-|graph[.]),,' | sort -u); do
    args=$(awk -v n="$f" '$1 == "draw" && $2 == n { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$SRC/scripts/slides.sh")
    if [ -z "$args" ]; then say "fig/$f: scripts/slides.sh draws no $f"
    elif ! grep -qF -- "colldraw $args" "$md"; then say "fig/$f is drawn by 'colldraw $args', a command the deck does not name"; fi
  done
  slides=$(awk '/^```/ { code = !code } !code && /^## /' "$md" | wc -l)
  pages=$(pdfinfo "$pdf" 2>/dev/null | awk '/^Pages:/ { print $2 }')
  if [ -z "$pages" ]; then say "no PDF"; fail=$((fail + 1)); continue; fi
  [ "$pages" = $((slides + 1)) ] || say "$pages pages for $slides slides and a title page"
  # a command broken inside an argument: an option and its value (`--algo ring` in inline code)
  # at the end of one line and the start of the next; or a code block line ending on an option
  # ("--algo \") whose value starts the next
  pairs=$(perl -0777 -ne 's/^```.*?^```[^\n]*$//gms;   # the code blocks out; a span may cross a line
                    while (/`([^`]*)`/g) { my $t = $1; print "$1 $2\n" while $t =~ /(?<![^\s])(-{1,2}[A-Za-z][-A-Za-z0-9_]*)\s([^\s`-][^\s`]*)/g }' "$md" | sort -u)
  for i in $(seq 1 "$pages"); do
    pdftotext -layout -f "$i" -l "$i" "$pdf" - 2>/dev/null | awk -v i="$i" -v pairs="$pairs" '
      BEGIN { n = split(pairs, l, "\n"); for (k = 1; k <= n; k++) { split(l[k], w, " "); val[w[1]] = val[w[1]] " " w[2] " " } }
      { gsub(/^[ \t]+|[ \t]+$/, "") } $0 == "" { next }
      prev != "" { first = $1; if (last in val && index(val[last], " " first " ")) printf "page %d: \"%s\" | \"%s\" (a line ends inside the argument)\n", i, prevline, $0 }
      { prev = 1; prevline = $0; last = $NF }'
  done > "$dir/broken-args"
  perl -ne 'if (/^```/) { $c = !$c; $p = ""; next } next unless $c;
            print "code line: $p | $_" if $p ne "" && /^\s*[^\s-]/; $p = /\s-{1,2}[A-Za-z][-A-Za-z0-9_]*\s*\\\s*$/ ? substr($_, 0, -1) : ""' "$md" >> "$dir/broken-args"
  [ ! -s "$dir/broken-args" ] || say "a command broken inside an argument:
$(head -5 "$dir/broken-args")"
  # a frame number, "N / PAGES", on the last line of every page (preamble.tex's footline)
  for i in $(seq 1 "$pages"); do
    pdftotext -layout -f "$i" -l "$i" "$pdf" - 2>/dev/null | grep "[^[:space:]]" | tail -1 | grep -Eq "(^|[^0-9])$i */ *$pages *\$" ||
      say "page $i has no frame number (\"$i / $pages\" at its foot)"
  done
  # no text in a picture under 8 pt as placed on its page (the body text is 11 pt): pdflatex
  # logs each picture's placed width (slides.sh's figsize.tex); an SVG's smallest font-size
  # times that width over its viewBox width, a gnuplot PNG's smallest font (FILE.font, which
  # slides.sh writes from the script) times that width over its width in pixels at gnuplot's
  # 96 px per inch
  small=$(textsizes "$dir/$name.latex.log" "$dir" "$SRC/slides")
  [ -z "$small" ] || say "text in a picture under 8 pt as placed on the page:
$small"
  imgpages=$(pdfimages -list "$pdf" 2>/dev/null | awk 'NR > 2 { print $1 }' | sort -u)
  for i in $(seq 1 "$pages"); do
    pdftoppm -r 30 -png -f "$i" -l "$i" "$pdf" "$dir/p" 2>/dev/null && [ -s "$(ls "$dir"/p-*.png 2>/dev/null | head -1)" ] ||
      say "page $i does not render"
    rm -f "$dir"/p-*.png
    # (the frame number at the foot is not a line of content)
    lines=$(pdftotext -layout -f "$i" -l "$i" "$pdf" - 2>/dev/null | grep '[^[:space:]]' | grep -Evc '^[[:space:]]*[0-9]+ */ *[0-9]+[[:space:]]*$')
    if [ "$i" -gt 1 ] && [ "$lines" -lt 2 ] && ! echo "$imgpages" | grep -qx "$i"; then
      say "page $i holds only its title: $(pdftotext -f "$i" -l "$i" "$pdf" - 2>/dev/null | tr -s '[:space:]' ' ')"
    fi
  done
  [ $bad = 0 ] && pass=$((pass + 1)) || fail=$((fail + 1))
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
