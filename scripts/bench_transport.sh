#!/usr/bin/env bash
# bench_transport.sh — which transport a `make bench` run got, for the
# labels of its results (scripts/bench.sh, scripts/bench_trainer.sh).
#
#   bench_transport.sh probe P BIN LAUNCH...   the transport collbench gets at P
#                                              ranks when it asks for shm: "shm";
#                                              "mpi" where the ranks span nodes
#                                              and shm falls back; "none" (and
#                                              collbench's words on stderr) when
#                                              it does not run
#   bench_transport.sh label TXT CSV HDR       CSV's rows with each algorithm
#                                              named NAME@T, T the transport TXT
#                                              (that run's collbench table) says
#                                              it ran on; its header row first
#                                              when HDR is 1
#
# The transport is read from what collbench printed ("# collbench: ...,
# transport T, ..."), never assumed from what was asked: on a cluster the shm
# transport falls back to MPI for the whole communicator, and a result filed
# as shm would then be an MPI figure compared as shared memory.
set -euo pipefail
transport_of() {   # transport_of TXT: the transport of collbench's header line, or nothing
  sed -n 's/^# collbench: .*, transport \([A-Za-z0-9_+-]*\),.*/\1/p' "$1" | head -1
}
case ${1:-} in
  probe)
    [ $# -ge 4 ] || { echo "bench_transport: probe P BIN LAUNCH..." >&2; exit 2; }
    p=$2 bin=$3; shift 3
    out=$(mktemp "${TMPDIR:-/tmp}/collkit-probe-XXXXXX")
    trap 'rm -f "$out"' EXIT
    "$@" -np "$p" "$bin/collbench" --transport shm --algo ring -b 8 -e 8 -n 1 -w 0 -c 0 --model none > "$out" 2>&1 ||
      { grep -v '^#' "$out" | tail -3 >&2 || true; echo none; exit 0; }
    t=$(transport_of "$out")
    echo "${t:-none}" ;;
  label)
    [ $# = 4 ] || { echo "bench_transport: label TXT CSV HDR" >&2; exit 2; }
    t=$(transport_of "$2")
    [ -n "$t" ] || { echo "bench_transport: $2 names no transport (not a collbench table)" >&2; exit 1; }
    awk -F, -v OFS=, -v hdr="$4" -v t="$t" 'NR == 1 { if (hdr == 1) print; next } { $1 = $1 "@" t; print }' "$3" ;;
  *) echo "usage: bench_transport.sh probe P BIN LAUNCH... | label TXT CSV HDR" >&2; exit 2 ;;
esac
