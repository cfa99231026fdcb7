#!/usr/bin/env bash
# labels.sh SVG N — a colldraw frame labels its arcs readably: N labels (class="label", the
# first of each label's two lines), every one right of every arc (x beyond each path's
# control points' reach: a cubic peaks 3/4 of the way to them) and no two closer than two
# lines of text. Prints what is wrong and exits 1.
set -u
awk -v want="$2" 'BEGIN { n = 0; arcx = 0 }
  /<path d="M[0-9]+,[0-9]+ C/ { s = $0
    while (match(s, /<path d="M[0-9]+,[0-9]+ C[0-9]+/)) {
      a = substr(s, RSTART + 9, RLENGTH - 9); split(a, c, /[, C]+/)
      peak = c[1] + 0.75 * (c[3] - c[1]); if (peak > arcx) arcx = peak
      s = substr(s, RSTART + RLENGTH) } }
  /class="label"/ { s = $0
    while (match(s, /class="label" x="[0-9]+" y="-?[0-9]+"/)) {
      split(substr(s, RSTART, RLENGTH), q, "\""); x[n] = q[4]; y[n] = q[6]; n++
      s = substr(s, RSTART + RLENGTH) } }
  END {
    bad = 0
    if (n != want) { print "labels.sh: " n " labels, want " want; bad = 1 }
    for (i = 0; i < n; i++) {
      if (x[i] <= arcx) { print "labels.sh: a label at x " x[i] " is not right of the arcs (up to x " arcx ")"; bad = 1 }
      for (j = i + 1; j < n; j++)
        if ((y[i] - y[j]) ^ 2 < 30 ^ 2 && (x[i] - x[j]) ^ 2 < 100 ^ 2) { print "labels.sh: labels at y " y[i] " and " y[j] " overlap"; bad = 1 }
    }
    exit bad }' "$1"
