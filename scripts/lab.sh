#!/usr/bin/env bash
# lab.sh BUILD_DIR NN — `make labNN`: start or continue lab NN in this tree.
# The first time, the lab's skeleton is copied to your working file (for lab
# 01, labs/01-ring/my_ring.c); after that your file is never overwritten.
# Then the autograder builds it and grades it (build/labs/NN-*/ holds the
# program and the logs).
set -eu
B=$1; n=$2
lab=$(ls -d labs/"$n"-*/ 2>/dev/null | head -1)
[ -n "$lab" ] || { echo "lab.sh: no lab $n (labs: $(ls -d labs/[0-9][0-9]-*/ | xargs -n1 basename | tr '\n' ' '))" >&2; exit 2; }
for f in "$lab"skeleton/*; do
  [ -e "$f" ] || continue
  mine=$lab$(basename "$f")
  if [ ! -e "$mine" ]; then
    cp "$f" "$mine"
    echo "lab $n: created $mine from the skeleton: this is your file (see ${lab}HANDOUT.md)"
  fi
done
exec "$B/bin/collgrade" "$n"
