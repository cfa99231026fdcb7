"""check_trace.py TRACE P NCALLS — a collbench trace is valid Chrome trace JSON:
one process per rank named "rank N", complete ("X") events with ts/dur and
args peer/bytes/step/phase, NCALLS all-reduce calls per rank, sends and
receives on every rank (P > 1), and on each thread events either nest or do
not overlap. Exit status 0 when all holds."""
import json
import sys

path, p, ncalls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path) as f:
    doc = json.load(f)          # raises on invalid JSON
errors = []
ev = doc["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
if names != {r: "rank %d" % r for r in range(p)}:
    errors.append("process names: %r" % names)
xs = [e for e in ev if e.get("ph") == "X"]
for e in xs:
    for k in ("name", "cat", "pid", "tid", "ts", "dur", "args"):
        if k not in e:
            errors.append("event without %s: %r" % (k, e))
    if e["dur"] < 0:
        errors.append("negative duration: %r" % e)
    for k in ("peer", "bytes", "step", "phase"):
        if k not in e["args"]:
            errors.append("event args without %s: %r" % (k, e))
for r in range(p):
    cats = [e["cat"] for e in xs if e["pid"] == r]
    calls = cats.count("allreduce")
    if calls != ncalls:
        errors.append("rank %d: %d calls in the trace, expected %d" % (r, calls, ncalls))
    if p > 1 and not ("send" in cats and "recv" in cats):
        errors.append("rank %d: no send/recv events" % r)
# Nesting per (pid, tid), in integer nanoseconds (the file has 3 decimals of µs).
lanes = {}
for e in xs:
    t0 = round(e["ts"] * 1000)
    lanes.setdefault((e["pid"], e["tid"]), []).append((t0, t0 + round(e["dur"] * 1000), e["name"]))
for (pid, tid), evs in sorted(lanes.items()):
    evs.sort(key=lambda x: (x[0], -x[1]))
    stack = []
    for t0, t1, name in evs:
        while stack and stack[-1][1] <= t0:
            stack.pop()
        if stack and t1 > stack[-1][1]:
            errors.append("rank %d tid %d: '%s' [%d, %d] overlaps '%s' [%d, %d] without nesting"
                          % (pid, tid, name, t0, t1, stack[-1][2], stack[-1][0], stack[-1][1]))
            break
        stack.append((t0, t1, name))
if errors:
    print("trace check FAILED:\n  " + "\n  ".join(errors[:20]))
    sys.exit(1)
print("trace ok: %d ranks, %d events, %d lanes, %d calls per rank" % (p, len(xs), len(lanes), ncalls))
