#!/bin/sh
# raw_mpi.sh [ROOT] — every raw MPI collective in the kit's C code outside
# collectives/, one "FILE:LINE: NAME: the line" each; exit 1 when there is
# one, 0 when there is none.
#
# Why. Every wait of a collkit program is bounded (collectives/src/README.md):
# a program's own collectives (a barrier, a verdict's broadcast, a sum of
# losses) go through the library's bounded family, ck_bounded_* or
# ck_watch_*, which end the job naming a rank that does not come, or return
# to say so. A raw MPI_Barrier waits for ever for a rank that is stopped or
# gone. Only the library (collectives/) calls MPI's collectives, inside that
# family and the reference algorithms; tests/ may, to compare against MPI.
# The labs' files are checked too: a skeleton or a solution is student code
# compiled against the library, and a raw collective there is what the
# grader refuses.
#
# Counted: the blocking, nonblocking (MPI_Iallreduce ...), persistent (..._init) and
# large-count (..._c) forms of Barrier, Bcast, Reduce, Allreduce, Gather(v),
# Allgather(v), Scatter(v), Alltoall(v/w), Scan, Exscan, Reduce_scatter,
# Reduce_scatter_block and the neighbourhood collectives, with MPI_ or
# PMPI_ — anywhere in code (a call, a function pointer, a macro), not in a
# comment or a string. MPI_Reduce_local is no collective.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -d "$ROOT" ] || { echo "raw_mpi.sh: $ROOT: no such folder" >&2; exit 2; }

# The C files of the kit: every top-level folder but collectives/ and
# tests/, hidden ones (.git) and build folders (a CMakeCache.txt).
files() {
  for d in "$ROOT"/*/; do
    d=${d%/}
    case ${d##*/} in collectives|tests) continue ;; esac
    [ -f "$d/CMakeCache.txt" ] && continue
    find "$d" \( -name CMakeCache.txt -prune \) -o -type f \
      \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cc' -o -name '*.cpp' \) -print
  done | sort
}

# Comments and string and character literals blanked (a comment may span
# lines), then the names looked for in what is left.
scan() {
  awk '
    FNR == 1 { incomment = 0 }
    {
      line = $0; out = ""; n = length(line); i = 1
      while (i <= n) {
        c = substr(line, i, 1); d = substr(line, i, 2)
        if (incomment) {
          if (d == "*/") { incomment = 0; i += 2; out = out "  " } else { i++; out = out " " }
        } else if (d == "/*") { incomment = 1; i += 2; out = out "  " }
        else if (d == "//") { break }
        else if (c == "\"" || c == "\047") {
          q = c; out = out " "; i++
          while (i <= n && substr(line, i, 1) != q) {
            if (substr(line, i, 1) == "\\") { i++; out = out " " }
            i++; out = out " "
          }
          i++; out = out " "
        } else { out = out c; i++ }
      }
      rest = out
      while (match(rest, /(^|[^A-Za-z0-9_])P?MPI_I?([Bb]arrier|[Bb]cast|[Aa]llreduce|[Rr]educe|[Gg]atherv?|[Aa]llgatherv?|[Ss]catterv?|[Aa]lltoall[vw]?|[Ss]can|[Ee]xscan|[Rr]educe_scatter|[Rr]educe_scatter_block|[Nn]eighbor_[a-z]+)(_init)?(_c)?([^A-Za-z0-9_]|$)/)) {
        name = substr(rest, RSTART, RLENGTH)
        gsub(/^[^A-Za-z]|[^A-Za-z0-9_]$/, "", name)
        text = $0; gsub(/^[ \t]+/, "", text)
        printf "%s:%d: %s: %s\n", FILENAME, FNR, name, text
        rest = substr(rest, RSTART + RLENGTH)
      }
    }' "$@"
}

list=$(files)
[ -n "$list" ] || { echo "raw_mpi.sh: no C files under $ROOT" >&2; exit 2; }
# shellcheck disable=SC2086  # file names of the kit: no spaces
found=$(scan $list | sed "s|^$ROOT/||")
if [ -n "$found" ]; then
  echo "$found"
  echo "raw_mpi.sh: $(printf '%s\n' "$found" | wc -l) raw MPI collective(s) outside collectives/: use the library's bounded ones (ck_bounded_* or ck_watch_*, collkit.h), which end or return with the name of a rank that does not come instead of waiting for ever"
  exit 1
fi
echo "raw_mpi.sh: no raw MPI collective outside collectives/ ($(printf '%s\n' "$list" | wc -l) files)"
exit 0
