#!/usr/bin/env bash
# slides.sh BUILD_DIR [OUT_DIR] — `make slides`: one PDF deck per lab from the
# Markdown in slides/ (pandoc + beamer), with the model figures regenerated
# from slides/params.txt by this build's collbench and plots/*.gp, so every
# number on a slide comes from a command named on it. Installs the Debian
# packages it needs when run as root; otherwise prints the exact command.
set -eu
B=$(cd "${1:?usage: slides.sh BUILD_DIR [OUT_DIR]}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${2:-$B/slides}
pkgs="pandoc texlive-latex-recommended texlive-fonts-recommended texlive-pictures lmodern poppler-utils gnuplot-nox librsvg2-bin"
have() { command -v pandoc >/dev/null && command -v pdflatex >/dev/null && command -v gnuplot >/dev/null &&
         command -v rsvg-convert >/dev/null &&
         kpsewhich beamer.cls >/dev/null 2>&1 && kpsewhich pgfmath.sty >/dev/null 2>&1; }
if ! have; then
  if [ "$(id -u)" -eq 0 ] && [ "${SLIDES_NO_INSTALL:-0}" != 1 ]; then
    echo "slides: installing $pkgs" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs > /dev/null
  else
    echo "slides: missing tools; run:  sudo apt-get update && sudo apt-get install -y --no-install-recommends $pkgs" >&2
    exit 1
  fi
fi
for t in collbench colldraw ckrun; do [ -x "$B/bin/$t" ] || { echo "slides: $B/bin/$t not built (make)" >&2; exit 1; }; done
mkdir -p "$OUT/fig"
# Figures: the α-β-γ model of the built-in algorithms at the slides' parameters.
"$B/bin/collbench" --extrapolate --model "$SRC/slides/params.txt" --algo naive,ring,rd,rabenseifner,tree,tree2 \
    --pmax 4096 --csv "$OUT/fig/extrap.csv" > "$OUT/fig/extrap.txt"
pngterm=png; gnuplot -e 'set terminal pngcairo' > /dev/null 2>&1 && pngterm=pngcairo
(cd "$SRC" && gnuplot -e "dir='$OUT/fig'; fmt='png'; pngterm='$pngterm'; algos='naive ring rd rabenseifner tree tree2'" \
    plots/extrapolation.gp)
# Pictures of the algorithms, drawn from the running code by colldraw (a slide
# names the command), as PDF for the decks: fig/NAME/frame-NN.pdf.
draw() {
  local name=$1; shift
  "$B/bin/colldraw" --out "$OUT/fig/$name" "$@" > "$OUT/fig/$name.txt" 2>&1 || { cat "$OUT/fig/$name.txt" >&2; exit 1; }
  for svg in "$OUT/fig/$name"/frame-*.svg; do rsvg-convert -f pdf -o "${svg%.svg}.pdf" "$svg"; done
}
draw ring4 --algo ring --np 4 --count 8
draw rd6 --algo rd --np 6 --count 6
draw rab4 --algo rabenseifner --np 4 --count 8
draw tree2p4 --algo tree2 --np 4 --count 8
# The pipelined ring's chunks in flight, measured now, as a Gantt timeline.
COLLKIT_CHUNK=8K "$B/bin/ckrun" -np 3 "$B/bin/collbench" --algo ring_pipelined -b 48K -e 48K -n 1 -w 0 -c 0 \
    --model none --trace "$OUT/fig/pipe.json" > "$OUT/fig/pipe.txt" 2>&1 || { cat "$OUT/fig/pipe.txt" >&2; exit 1; }
"$B/bin/colldraw" --gantt "$OUT/fig/pipe.json" --out "$OUT/fig/pipe" > /dev/null
rsvg-convert -f pdf -o "$OUT/fig/pipe/gantt.pdf" "$OUT/fig/pipe/gantt.svg"
status=0
# Each deck: pandoc writes the LaTeX, pdflatex
# typesets it twice; NAME.pandoc.log keeps pandoc's warnings, NAME.latex.log its overfull boxes and missing files
# for the slide test). SLIDES_ONLY=NAME builds that deck alone.
for md in "$SRC"/slides/[0-9][0-9]-*.md; do
  name=$(basename "$md" .md)
  [ -z "${SLIDES_ONLY:-}" ] || [ "$SLIDES_ONLY" = "$name" ] || continue
  ok=1
  pandoc -t beamer -s --slide-level=2 -V theme=default -V aspectratio=169 -H "$SRC/slides/preamble.tex" \
      "$md" -o "$OUT/$name.tex" 2> "$OUT/$name.pandoc.log" || ok=0
  if [ $ok = 1 ]; then
    for run in 1 2; do
      (cd "$OUT" && TEXINPUTS=".:$SRC/slides//:" pdflatex -interaction=nonstopmode -halt-on-error "$name.tex" \
         > /dev/null 2>&1) || { ok=0; break; }
    done
    mv -f "$OUT/$name.log" "$OUT/$name.latex.log" 2>/dev/null
  fi
  rm -f "$OUT/$name".{aux,nav,out,snm,toc,vrb}
  if [ $ok = 1 ]; then
    echo "slides: $OUT/$name.pdf"
  else
    echo "slides: $name failed:" >&2; cat "$OUT/$name.pandoc.log" >&2; grep -A3 '^!' "$OUT/$name.latex.log" >&2 2>/dev/null; status=1
  fi
done
exit $status
