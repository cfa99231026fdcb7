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
pkgs="pandoc texlive-latex-recommended texlive-fonts-recommended texlive-pictures lmodern poppler-utils gnuplot-nox"
have() { command -v pandoc >/dev/null && command -v pdflatex >/dev/null && command -v gnuplot >/dev/null &&
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
[ -x "$B/bin/collbench" ] || { echo "slides: $B/bin/collbench not built (make)" >&2; exit 1; }
mkdir -p "$OUT/fig"
# Figures: the α-β-γ model of the built-in algorithms at the slides' parameters.
"$B/bin/collbench" --extrapolate --model "$SRC/slides/params.txt" --algo naive,ring,rd,rabenseifner,tree,tree2 \
    --pmax 4096 --csv "$OUT/fig/extrap.csv" > "$OUT/fig/extrap.txt"
pngterm=png; gnuplot -e 'set terminal pngcairo' > /dev/null 2>&1 && pngterm=pngcairo
(cd "$SRC" && gnuplot -e "dir='$OUT/fig'; fmt='png'; pngterm='$pngterm'; algos='naive ring rd rabenseifner tree tree2'" \
    plots/extrapolation.gp)
status=0
for md in "$SRC"/slides/[0-9][0-9]-*.md; do
  name=$(basename "$md" .md)
  if pandoc -t beamer --slide-level=2 --resource-path="$OUT:$SRC/slides" -V theme=default -V aspectratio=169 \
       -H "$SRC/slides/preamble.tex" \
       "$md" -o "$OUT/$name.pdf" 2> "$OUT/$name.log"; then
    echo "slides: $OUT/$name.pdf"
  else
    echo "slides: $name failed:" >&2; tail -20 "$OUT/$name.log" >&2; status=1
  fi
done
exit $status
