#!/usr/bin/env bash
# trace.sh COLLBENCH P MPIRUN [MPIRUN FLAGS...] — collbench --trace on P ranks,
# every algorithm, two sizes, a small chunk so the pipelined algorithms have
# several messages in flight; then check_trace.py validates the file.
set -eu
B=$1 P=$2; shift 2
command -v python3 >/dev/null || { echo "python3 not found: trace check skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export COLLKIT_CHUNK=4096
"$@" -np "$P" "$B" --algo all -b 1K -e 64K -f 64 -n 2 -w 1 -c 1 --place both --model none \
    --trace "$dir/t.json" --csv "$dir/r.csv" > "$dir/out.txt" || { cat "$dir/out.txt"; exit 1; }
cat "$dir/out.txt"
ncalls=$(( ($(wc -l < "$dir/r.csv") - 1) ))
python3 "$(dirname "$0")/check_trace.py" "$dir/t.json" "$P" "$ncalls"
