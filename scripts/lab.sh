#!/usr/bin/env bash
# lab.sh BUILD_DIR NN — `make labNN`: start or continue lab NN in this tree.
# The first time, the lab's skeleton is copied to your working file (for lab
# 01, labs/01-ring/my_ring.c) — or, for a lab that continues an earlier one
# (lab.conf: from = ...), your file of that lab; after that your file is
# never overwritten.
# Then the autograder builds it and grades it (build/labs/NN-*/ holds the
# program and the logs).
set -eu
B=$1; n=$2
lab=$(ls -d labs/"$n"-*/ 2>/dev/null | head -1)
[ -n "$lab" ] || { echo "lab.sh: no lab $n (labs: $(ls -d labs/[0-9][0-9]-*/ | xargs -n1 basename | tr '\n' ' '))" >&2; exit 2; }
# A lab that continues an earlier one names the student's earlier file in its
# lab.conf (from = ../01-ring/my_ring.c): that file is copied instead of the
# skeleton, which is then only a placeholder saying what to do.
from=$(sed -n 's/^from[[:space:]]*=[[:space:]]*//p' "${lab}lab.conf" 2>/dev/null | sed 's/[[:space:]]*#.*//' | head -1)
for f in "$lab"skeleton/*; do
  [ -e "$f" ] || continue
  mine=$lab$(basename "$f")
  [ ! -e "$mine" ] || continue
  if [ -n "$from" ] && [ "$(basename "$from")" = "$(basename "$f")" ]; then
    prev=$(cd "$lab" && realpath -m "$from")
    prev=${prev#"$PWD/"}
    if [ -f "$prev" ]; then
      cp "$prev" "$mine"
      echo "lab $n: created $mine from your $prev: this is your file now (see ${lab}HANDOUT.md)"
      continue
    fi
    cp "$f" "$mine"
    echo "lab $n: this lab starts from your $prev, which does not exist yet." >&2
    echo "lab $n: do that lab first (make $(basename "$(dirname "$prev")" | cut -d- -f1 | sed 's/^/lab/')), then: cp $prev $mine" >&2
    echo "lab $n: $mine is a placeholder until then (it fails every part)" >&2
    continue
  fi
  cp "$f" "$mine"
  echo "lab $n: created $mine from the skeleton: this is your file (see ${lab}HANDOUT.md)"
done
exec "$B/bin/collgrade" "$n"
