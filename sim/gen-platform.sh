#!/usr/bin/env bash
# gen-platform.sh — write a SimGrid platform (and its hostfile) for collkit's
# simulated clusters. The shipped ones in sim/platforms/ come from `make-all`.
#
#   sim/gen-platform.sh [options] OUT.xml          writes OUT.xml and OUT.hosts
#     --topology T    crossbar (default), fattree or nodes
#     --hosts N       number of hosts, one rank each (default 16)
#     --bw B          link bandwidth, SimGrid units (default 25Gbps)
#     --lat L         host-to-host latency through one switch (default 1us):
#                     each link gets half of it; in a fat tree a path through
#                     the spine crosses 4 links, so it takes 2 L
#     --speed S       host speed (default 10Gf): collkit charges one flop per
#                     reduced element, so S is the reduce rate in elements/s
#     --oversub K     fat tree: leaf uplinks are 1/K of the leaf's hosts
#                     (1 = non-blocking, default; 4 = 4:1 oversubscribed)
#     --leaf H        fat tree: hosts per leaf switch (default: sqrt(N) rounded
#                     to a power of two, at least 2)
#     --node K        nodes: hosts per node (default 8; consecutive hosts, so
#                     consecutive ranks, share a node)
#     --node-bw B     nodes: each host's link inside its node (default 400Gbps:
#                     a fat link, shared memory or NVLink between the GPUs of
#                     one machine)
#     --node-lat L    nodes: host to host inside a node (default 200ns)
#                     With --topology nodes, --bw and --lat are the network
#                     between nodes: each node reaches a non-blocking switch
#                     through ONE uplink of --bw (its ranks share it, as the
#                     ranks of a machine share its NIC), host to host across
#                     nodes --lat (default 1us)
#     --tcp           keep SMPI's TCP correction factors (default: off, below)
#   sim/gen-platform.sh make-all                    regenerate sim/platforms/
#
# Why the TCP correction factors are off. SMPI's default network model
# multiplies latency by 2 to 12 and bandwidth by 0.34 to 0.94 depending on
# the message size: factors measured on one TCP/Ethernet cluster (Grid'5000's
# griffon), which make a simulated network behave like that one. Here the
# lesson is the alpha-beta model, so a platform must mean what its file says:
# a message of n bytes between two hosts takes lat + n / bw, and a ping-pong
# recovers exactly that alpha and beta. The <config> block below sets every
# factor to 1, turns off the reverse (ACK) traffic and TCP's RTT-unfairness
# in bandwidth sharing. Pass --tcp (or delete the block) to get the calibrated
# TCP behaviour back.
set -euo pipefail

topo=crossbar hosts=16 bw=25Gbps lat=1us speed=10Gf oversub=1 leaf="" tcp=0 out=""
node=8 node_bw=400Gbps node_lat=200ns

usage() { sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; }

# Latency in SimGrid units, halved: 1us -> 500ns (integers where possible).
half_lat() {
  awk -v l="$1" 'BEGIN {
    n = l + 0; u = l; sub(/^[0-9.eE+-]+/, "", u)
    s = (u == "s" || u == "") ? 1 : u == "ms" ? 1e-3 : u == "us" ? 1e-6 : u == "ns" ? 1e-9 : u == "ps" ? 1e-12 : -1
    if (s < 0 || n <= 0) { print "bad"; exit }
    h = n * s / 2
    us = h * 1e6; ns = h * 1e9   # whole units, up to rounding (2e-7 * 1e9 is 199.99...)
    if (h >= 1e-6 && (us - int(us + 0.5)) ^ 2 < 1e-18) printf "%dus\n", us + 0.5
    else if ((ns - int(ns + 0.5)) ^ 2 < 1e-12) printf "%dns\n", ns + 0.5
    else printf "%gs\n", h
  }'
}

pow2_sqrt() {   # the power of two nearest sqrt(n), at least 2
  awk -v n="$1" 'BEGIN { r = sqrt(n); p = 2; while (p * 2 <= r * 1.42) p *= 2; print p }'
}

# Seconds of a SimGrid time ("1us", "200ns"), or "bad".
seconds() {
  awk -v l="$1" 'BEGIN {
    n = l + 0; u = l; sub(/^[0-9.eE+-]+/, "", u)
    s = (u == "s" || u == "") ? 1 : u == "ms" ? 1e-3 : u == "us" ? 1e-6 : u == "ns" ? 1e-9 : u == "ps" ? 1e-12 : -1
    if (s < 0 || n <= 0) print "bad"; else printf "%.12g\n", n * s }'
}

# --topology nodes: one zone per node (a cluster of --node hosts, each on
# its own --node-bw link to the node's router), and between nodes a full
# mesh of routes through each node's uplink (out-I, in-J: one link each way,
# so sending and receiving do not share). Every pair of nodes is routed
# explicitly: SimGrid's Full routing has no default route.
node_zones() {   # node_zones ID
  local nl lt hl up
  nl=$(seconds "$node_lat") lt=$(seconds "$lat")
  { [ "$nl" = bad ] || [ "$lt" = bad ]; } && { echo "gen-platform: bad --lat or --node-lat" >&2; exit 2; }
  up=$(awk -v a="$lt" -v b="$nl" 'BEGIN { x = (a - b) / 2; if (x <= 0) print "bad"; else printf "%.12gs\n", x }')
  [ "$up" = bad ] && { echo "gen-platform: --lat $lat must exceed --node-lat $node_lat (across nodes is farther)" >&2; exit 2; }
  hl=$(half_lat "$node_lat")
  awk -v n=$((hosts / node)) -v k="$node" -v id="$1" -v speed="$speed" -v nbw="$node_bw" -v hl="$hl" -v bw="$bw" \
      -v up="$up" 'BEGIN {
    printf "  <zone id=\"%s\" routing=\"Full\">\n", id
    for (i = 0; i < n; i++)
      printf "    <cluster id=\"%s-n%d\" prefix=\"node-\" suffix=\"\" radical=\"%d-%d\" speed=\"%s\" bw=\"%s\" lat=\"%s\"\n" \
             "             router_id=\"router-%d\" sharing_policy=\"SPLITDUPLEX\"/>\n", id, i, i * k, i * k + k - 1, speed, nbw, hl, i
    for (i = 0; i < n; i++) {
      printf "    <link id=\"out-%d\" bandwidth=\"%s\" latency=\"%s\"/>\n", i, bw, up
      printf "    <link id=\"in-%d\" bandwidth=\"%s\" latency=\"%s\"/>\n", i, bw, up
    }
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        if (i != j)
          printf "    <zoneRoute src=\"%s-n%d\" dst=\"%s-n%d\" gw_src=\"router-%d\" gw_dst=\"router-%d\" symmetrical=\"NO\">" \
                 "<link_ctn id=\"out-%d\"/><link_ctn id=\"in-%d\"/></zoneRoute>\n", id, i, id, j, i, j, i, j
    printf "  </zone>\n" }'
}

write() {
  local file=$1 hostsfile=${1%.xml}.hosts
  local hl; hl=$(half_lat "$lat")
  [ "$hl" = bad ] && { echo "gen-platform: bad --lat '$lat' (e.g. 1us, 500ns)" >&2; exit 2; }
  local id desc topo_attr=""
  case "$topo" in
    crossbar)
      id="crossbar-$hosts"
      desc="crossbar: every host has its own full-duplex link ($bw, $hl) to a non-blocking switch; host to host: $lat"
      ;;
    fattree)
      local l=${leaf:-$(pow2_sqrt "$hosts")}
      if [ $((hosts % l)) -ne 0 ] || [ "$l" -lt 2 ]; then
        echo "gen-platform: --hosts $hosts is not a multiple of --leaf $l" >&2; exit 2
      fi
      if [ $((l % oversub)) -ne 0 ]; then
        echo "gen-platform: --leaf $l hosts cannot share uplinks $oversub:1 (leaf must be a multiple of --oversub)" >&2; exit 2
      fi
      local leaves=$((hosts / l)) up=$((l / oversub))
      # SimGrid FAT_TREE: levels; children per switch at each level; parents of
      # each node at each level; links between a node and each parent.
      topo_attr=" topology=\"FAT_TREE\" topo_parameters=\"2;$l,$leaves;1,$up;1,1\""
      if [ "$oversub" = 1 ]; then id="fattree-$hosts"; else id="fattree-os$oversub-$hosts"; fi
      desc="two-level fat tree: $leaves leaf switches of $l hosts, $up spine switches"
      desc="$desc ($([ "$oversub" = 1 ] && echo "non-blocking: as many uplinks as hosts per leaf" || echo "$oversub:1 oversubscribed: $up uplinks for $l hosts per leaf"));"
      desc="$desc every link $bw, $hl; host to host: $lat in a leaf, $(awk -v l="$lat" 'BEGIN { n = l + 0; u = l; sub(/^[0-9.]+/, "", u); print 2 * n u }') through the spine"
      ;;
    nodes)
      if [ "$node" -lt 2 ] || [ $((hosts % node)) -ne 0 ] || [ "$hosts" -le "$node" ]; then
        echo "gen-platform: --hosts $hosts must be a multiple of --node $node (at least 2 per node, 2 nodes or more)" >&2; exit 2
      fi
      id="nodes$node-$hosts"
      desc="$((hosts / node)) nodes of $node hosts: inside a node each host has its own $node_bw link to the node's router (host to host: $node_lat); between nodes each node has ONE uplink of $bw each way to a non-blocking switch, shared by its $node hosts (host to host: $lat)"
      ;;
    *) echo "gen-platform: --topology must be crossbar, fattree or nodes (got '$topo')" >&2; exit 2 ;;
  esac
  {
    echo "<?xml version='1.0'?>"
    echo "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">"
    echo "<!-- collkit simulated cluster, written by sim/gen-platform.sh:"
    echo "     $desc."
    echo "     Host speed $speed: collkit charges one flop per reduced element (collectives/src/transport_mpi.c). -->"
    echo "<platform version=\"4.1\">"
    if [ "$tcp" = 0 ]; then
      echo "  <!-- SMPI's TCP correction factors off, so that a message of n bytes takes"
      echo "       latency + n / bandwidth exactly and a ping-pong recovers alpha and beta"
      echo "       (sim/gen-platform.sh says why; --tcp keeps them). -->"
      echo "  <config>"
      echo "    <prop id=\"smpi/bw-factor\" value=\"0:1\"/>"
      echo "    <prop id=\"smpi/lat-factor\" value=\"0:1\"/>"
      echo "    <prop id=\"network/crosstraffic\" value=\"0\"/>"
      echo "    <prop id=\"network/weight-S\" value=\"0\"/>"
      echo "  </config>"
    fi
    if [ "$topo" = nodes ]; then
      node_zones "$id"
    else
      echo "  <cluster id=\"$id\" prefix=\"node-\" suffix=\"\" radical=\"0-$((hosts - 1))\"$topo_attr"
      echo "           speed=\"$speed\" bw=\"$bw\" lat=\"$hl\" sharing_policy=\"SPLITDUPLEX\"/>"
    fi
    echo "</platform>"
  } > "$file"
  seq 0 $((hosts - 1)) | sed 's/^/node-/' > "$hostsfile"
}

if [ "${1:-}" = make-all ]; then
  dir=$(cd "$(dirname "$0")" && pwd)/platforms
  mkdir -p "$dir"
  for n in 16 64 256 1024; do
    topo=crossbar hosts=$n oversub=1; write "$dir/crossbar-$n.xml"
    topo=fattree hosts=$n oversub=1; write "$dir/fattree-$n.xml"
    topo=fattree hosts=$n oversub=4; write "$dir/fattree-os4-$n.xml"
    # Nodes of 8: the files grow as the square of the nodes (every pair of
    # nodes routed), 2.8 MB at 1024 hosts: 16 and 64 are shipped, and
    # make sim-bench writes the larger ones into its results folder.
    [ "$n" -le 64 ] && { topo=nodes hosts=$n oversub=1; write "$dir/nodes8-$n.xml"; }
  done
  echo "gen-platform: wrote $(ls "$dir"/*.xml | wc -l) platforms and their hostfiles in $dir"
  exit 0
fi

while [ $# -gt 0 ]; do
  case "$1" in
    --topology) topo=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --bw) bw=$2; shift 2 ;;
    --lat) lat=$2; shift 2 ;;
    --speed) speed=$2; shift 2 ;;
    --oversub) oversub=$2; shift 2 ;;
    --leaf) leaf=$2; shift 2 ;;
    --node) node=$2; shift 2 ;;
    --node-bw) node_bw=$2; shift 2 ;;
    --node-lat) node_lat=$2; shift 2 ;;
    --tcp) tcp=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "gen-platform: unknown option $1 (--help lists them)" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[ -n "$out" ] || { usage >&2; exit 2; }
case "$hosts" in ''|*[!0-9]*) echo "gen-platform: --hosts must be a number" >&2; exit 2 ;; esac
case "$oversub" in ''|*[!0-9]*|0) echo "gen-platform: --oversub must be a number >= 1" >&2; exit 2 ;; esac
case "$node" in ''|*[!0-9]*) echo "gen-platform: --node must be a number of hosts" >&2; exit 2 ;; esac
[ "$hosts" -ge 2 ] || { echo "gen-platform: --hosts must be at least 2" >&2; exit 2; }
write "$out"
echo "gen-platform: wrote $out and ${out%.xml}.hosts"
