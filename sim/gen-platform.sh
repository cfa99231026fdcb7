#!/usr/bin/env bash
# gen-platform.sh — write a SimGrid platform (and its hostfile) for collkit's
# simulated clusters. The shipped ones in sim/platforms/ come from `make-all`.
#
#   sim/gen-platform.sh [options] OUT.xml          writes OUT.xml and OUT.hosts
#     --topology T    crossbar (default) or fattree
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

usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; }

# Latency in SimGrid units, halved: 1us -> 500ns (integers where possible).
half_lat() {
  awk -v l="$1" 'BEGIN {
    n = l + 0; u = l; sub(/^[0-9.eE+-]+/, "", u)
    s = (u == "s" || u == "") ? 1 : u == "ms" ? 1e-3 : u == "us" ? 1e-6 : u == "ns" ? 1e-9 : u == "ps" ? 1e-12 : -1
    if (s < 0 || n <= 0) { print "bad"; exit }
    h = n * s / 2
    if (h >= 1e-6 && h * 1e6 == int(h * 1e6)) printf "%dus\n", h * 1e6
    else if (h * 1e9 == int(h * 1e9)) printf "%dns\n", h * 1e9
    else printf "%gs\n", h
  }'
}

pow2_sqrt() {   # the power of two nearest sqrt(n), at least 2
  awk -v n="$1" 'BEGIN { r = sqrt(n); p = 2; while (p * 2 <= r * 1.42) p *= 2; print p }'
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
    *) echo "gen-platform: --topology must be crossbar or fattree (got '$topo')" >&2; exit 2 ;;
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
    echo "  <cluster id=\"$id\" prefix=\"node-\" suffix=\"\" radical=\"0-$((hosts - 1))\"$topo_attr"
    echo "           speed=\"$speed\" bw=\"$bw\" lat=\"$hl\" sharing_policy=\"SPLITDUPLEX\"/>"
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
    --tcp) tcp=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "gen-platform: unknown option $1 (--help lists them)" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[ -n "$out" ] || { usage >&2; exit 2; }
case "$hosts" in ''|*[!0-9]*) echo "gen-platform: --hosts must be a number" >&2; exit 2 ;; esac
case "$oversub" in ''|*[!0-9]*|0) echo "gen-platform: --oversub must be a number >= 1" >&2; exit 2 ;; esac
[ "$hosts" -ge 2 ] || { echo "gen-platform: --hosts must be at least 2" >&2; exit 2; }
write "$out"
echo "gen-platform: wrote $out and ${out%.xml}.hosts"
