#!/usr/bin/env bash
# platform.sh SOURCE — sim/gen-platform.sh --topology nodes writes what it
# says (no SimGrid needed: the XML and the hostfile are read as text):
#   - 32 hosts in nodes of 8: 4 node zones of consecutive hosts (node-0..7,
#     node-8..15, ...), each host on a --node-bw link; one uplink each way
#     per node at --bw; every ordered pair of nodes routed through the
#     source's out-link and the destination's in-link (12 routes), no other;
#     the uplink latencies add up to --lat across nodes;
#   - a hostfile of the 32 hosts in order;
#   - refused with a reason, exit 2: hosts not a multiple of the node, one
#     node only, a network between nodes nearer than inside one.
set -u
GEN=$1/sim/gen-platform.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collkit-platform-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
x=$tmp/n.xml
"$GEN" --topology nodes --hosts 32 --node 8 --bw 10Gbps --lat 2us --node-bw 800Gbps --node-lat 400ns "$x" > /dev/null ||
  fail "gen-platform --topology nodes failed"
[ "$(grep -c '<cluster ' "$x")" = 4 ] || fail "want 4 node zones: $(grep -c '<cluster ' "$x")"
for i in 0 1 2 3; do
  grep -q "radical=\"$((8 * i))-$((8 * i + 7))\".*bw=\"800Gbps\" lat=\"200ns\"" "$x" ||
    fail "node $i: not hosts $((8 * i))-$((8 * i + 7)) on 800Gbps links of 200ns"
done
[ "$(grep -c '<link id="out-[0-3]" bandwidth="10Gbps" latency="8e-07s"/>' "$x")" = 4 ] || fail "want 4 out-links of 10Gbps, 0.8 us"
[ "$(grep -c '<link id="in-[0-3]" bandwidth="10Gbps" latency="8e-07s"/>' "$x")" = 4 ] || fail "want 4 in-links of 10Gbps, 0.8 us"
[ "$(grep -c '<zoneRoute ' "$x")" = 12 ] || fail "want 12 routes (4 x 3): $(grep -c '<zoneRoute ' "$x")"
bad=$(grep '<zoneRoute ' "$x" |
      sed 's/.*-n\([0-9]*\)" dst="[^"]*-n\([0-9]*\)".*out-\([0-9]*\)".*in-\([0-9]*\)".*/\1 \2 \3 \4/' |
      awk '$1 == $2 || $1 != $3 || $2 != $4' | head -1)
[ -z "$bad" ] || fail "a route not out of its source and into its destination: $bad"
[ "$(grep -o 'src="[^"]*" dst="[^"]*"' "$x" | sort -u | wc -l)" = 12 ] || fail "a pair of nodes routed twice"
[ "$(tr '\n' ' ' < "$tmp/n.hosts")" = "$(seq 0 31 | sed 's/^/node-/' | tr '\n' ' ')" ] || fail "hostfile not node-0..31 in order"
refused() {   # refused WHY ARGS...: exit 2 with WHY on stderr
  local why=$1 out rc; shift
  out=$("$GEN" --topology nodes "$@" "$tmp/bad.xml" 2>&1); rc=$?
  [ $rc = 2 ] && [[ $out == *"$why"* ]] || fail "gen-platform $*: exit $rc, '$out' (want 2, '$why')"
}
refused "must be a multiple of --node 8" --hosts 20 --node 8
refused "2 nodes or more" --hosts 8 --node 8
refused "must exceed --node-lat" --hosts 16 --node 8 --lat 100ns --node-lat 200ns
[ $fails = 0 ] && echo "platform ok" || echo "$fails failure(s)"
exit $((fails != 0))
