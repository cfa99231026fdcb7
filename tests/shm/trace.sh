#!/usr/bin/env bash
# trace.sh COLLBENCH P MPIRUN [FLAGS...] — collbench --trace on the shm
# transport: a valid trace (tests/bench/check_trace.py), and the single-copy
# algorithms' phases in it: oneshot's copy-in and reduce, twoshot's copy-in,
# reduce-scatter and all-gather, each event tagged with its phase (barrier
# waits show as "wait" events in phase "barrier" when a peer was late).
set -eu
B=$1 P=$2; shift 2
command -v python3 >/dev/null || { echo "python3 not found: trace check skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$@" -np "$P" "$B" --transport shm --algo ring,oneshot,twoshot -b 1K -e 1M -f 1024 -n 2 -w 1 -c 1 --place both \
    --model none --trace "$dir/t.json" --csv "$dir/r.csv" > "$dir/out.txt" || { cat "$dir/out.txt"; exit 1; }
cat "$dir/out.txt"
ncalls=$(( ($(wc -l < "$dir/r.csv") - 1) ))
python3 "$(dirname "$0")/../bench/check_trace.py" "$dir/t.json" "$P" "$ncalls"
python3 - "$dir/t.json" "$P" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); p = int(sys.argv[2])
xs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
errors = []
for r in range(p):
    evs = [e for e in xs if e["pid"] == r]
    algo_of = {e["args"]["call"]: e["name"].split()[1] for e in evs if e["cat"] == "allreduce"}
    seen = {}
    for e in evs:
        if e["cat"] != "allreduce":
            seen.setdefault(algo_of.get(e["args"]["call"], "?"), set()).add((e["cat"], e["args"]["phase"]))
    want = {"oneshot": {("reduce", "reduce")},
            "twoshot": {("reduce", "reduce-scatter"), ("copy", "all-gather")}}
    for algo, need in want.items():
        got = seen.get(algo)
        if got is None:
            errors.append("rank %d: no %s call in the trace (calls: %s)" % (r, algo, sorted(seen)))
            continue
        for n in need:
            if n not in got:
                errors.append("rank %d: %s has no %s event in phase %s (has %s)" % (r, algo, n[0], n[1], sorted(got)))
        if not any(c == "copy" and ph == "copy-in" for c, ph in got):
            errors.append("rank %d: %s shows no copy-in (has %s)" % (r, algo, sorted(got)))
if errors:
    print("shm trace check FAILED:\n  " + "\n  ".join(errors[:20])); sys.exit(1)
print("shm trace ok: the single-copy phases are in the trace on all %d ranks" % p)
PY
