# newdir.sh — sourced by the scripts that write results (bench.sh,
# sim-bench.sh; collgrade's work folders should use it too): a results folder
# is created by mkdir itself, never after a test that it is not there. mkdir
# either creates the folder or fails because it exists, in one system call,
# so two runs started in the same second can never choose the same folder
# (a test then a mkdir -p leaves a gap in which both pass the test).

# new_dir PROG VAR DIR: create exactly DIR (its parent as needed), the
# folder the user named in VAR; exit 2 with a message when DIR exists or
# cannot be made.
new_dir() {
  mkdir -p -- "$(dirname -- "$3")" 2>/dev/null
  mkdir -- "$3" 2>/dev/null && return 0
  if [ -e "$3" ] || [ -L "$3" ]; then
    echo "$1: $2=$3 exists: give a new folder (results are never written over)" >&2
  else
    echo "$1: cannot create $2=$3: $(mkdir -- "$3" 2>&1 | sed 's/^mkdir: //')" >&2
  fi
  exit 2
}

# new_stamped_dir PROG BASE LINK: create BASE, else BASE-1, BASE-2, ...: the
# first that mkdir creates; its path in NEW_DIR. LINK (optional) is then
# pointed at it: a symlink made under a temporary name and renamed over LINK,
# so a reader never finds LINK missing and two runs never fail on it.
new_stamped_dir() {
  local prog=$1 base=$2 link=${3:-} n=0 d=$2
  mkdir -p -- "$(dirname -- "$base")" || { echo "$prog: cannot create $(dirname -- "$base")" >&2; exit 2; }
  until mkdir -- "$d" 2>/dev/null; do
    if [ ! -e "$d" ] && [ ! -L "$d" ]; then
      echo "$prog: cannot create $d: $(mkdir -- "$d" 2>&1 | sed 's/^mkdir: //')" >&2; exit 2
    fi
    n=$((n + 1))
    [ $n -le 1000 ] || { echo "$prog: no free folder name after $base-1000" >&2; exit 2; }
    d=$base-$n
  done
  NEW_DIR=$d
  if [ -n "$link" ]; then
    local tmp
    tmp=$link.tmp.$$
    ln -sfn -- "$(basename -- "$d")" "$tmp" && mv -Tf -- "$tmp" "$link" || rm -f -- "$tmp"
  fi
}
