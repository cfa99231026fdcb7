#!/usr/bin/env bash
# links.sh COLLBENCH MPIRUN [FLAGS...] — the two link classes, with nodes
# made by COLLKIT_RANKS_PER_NODE on one machine:
#   - p = 2, one rank per node: no pair inside a node (said), the pair 0 <-> 1
#     between nodes; every CSV row "inter"; the file says links 2;
#   - p = 4, nodes of 2: the pair 0 <-> 1 inside node 0, 0 <-> 2 between
#     nodes 0 and 1; CSV rows of both; the file carries both links;
#   - the sweep with --model auto prices steps between nodes with that link,
#     no warning; with a file of one link it warns, on stdout and stderr;
#   - COLLKIT_RANKS_PER_NODE that is not a number of ranks: refused (collbench
#     exits 2), the variable and its value named.
# Checks what was measured and said, never a time.
set -u
B=$1; shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/collkit-links-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
has() { grep -q -- "$2" "$1" || fail "$1 lacks '$2': $(cat "$1")"; }
run() {   # run K NP ARGS...: collbench with COLLKIT_RANKS_PER_NODE=K (sent to every rank)
  local k=$1 np=$2; shift 2
  COLLKIT_RANKS_PER_NODE=$k "$@" 2>&1
}
MPI=("$@")
pp() { run "$1" "$2" "${MPI[@]}" -np "$2" -x COLLKIT_RANKS_PER_NODE "$B" --pingpong -b 8 -e 4K -f 8 -n 3 \
         --csv "$dir/pp$1_$2.csv" --save-model "$dir/m$1_$2.txt" > "$dir/pp$1_$2.txt" || fail "ping-pong k=$1 p=$2"; }

pp 1 2
has "$dir/pp1_2.txt" "link intra (inside a node): not measured (no node holds two ranks)"
has "$dir/pp1_2.txt" "link inter (between nodes): ranks 0 <-> 1 (nodes 0 and 1)"
[ "$(tail -n +2 "$dir/pp1_2.csv" | cut -d, -f5 | sort -u)" = inter ] || fail "k=1: CSV rows not all inter"
has "$dir/m1_2.txt" "^links 2$"
has "$dir/m1_2.txt" "^alpha_inter_us "

pp 2 4
has "$dir/pp2_4.txt" "link intra (inside a node): ranks 0 <-> 1 (node 0)"
has "$dir/pp2_4.txt" "link inter (between nodes): ranks 0 <-> 2 (nodes 0 and 1)"
[ "$(tail -n +2 "$dir/pp2_4.csv" | cut -d, -f5 | sort | uniq -c | awk '{ printf "%s%s", $1, $2 }')" = 4inter4intra ] ||
  fail "k=2: want 4 intra and 4 inter rows: $(cat "$dir/pp2_4.csv")"
has "$dir/m2_4.txt" "^links 3$"
has "$dir/m2_4.txt" "^beta_inter_ns_per_byte "

sw() { run "$1" 4 "${MPI[@]}" -np 4 -x COLLKIT_RANKS_PER_NODE "$B" --algo ring,rd -b 4K -e 4K -n 2 -w 0 -c 0 \
         --place out "${@:2}"; }
sw 2 --model auto --json "$dir/auto.json" > "$dir/auto.txt" || fail "sweep --model auto"
has "$dir/auto.json" '"links": 3'
has "$dir/auto.json" '"node_ranks": 2'
has "$dir/auto.txt" "ranks span nodes (consecutive ranks share a node); steps between nodes priced with the link between nodes"
grep -q warning "$dir/auto.txt" && fail "--model auto warned: $(grep warning "$dir/auto.txt")"
printf 'alpha_us 2\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\n' > "$dir/one.txt"
sw 2 --model "$dir/one.txt" > "$dir/one.out" || fail "sweep with a one-link file"
has "$dir/one.out" "^# warning: the ranks span nodes but the model knows no inter-node link"
has "$dir/one.out" "^collbench: warning: the ranks span nodes"
sw 4 --model "$dir/one.txt" > "$dir/onenode.out" || fail "sweep on one node"
has "$dir/onenode.out" "# model: all ranks on one node"
grep -q warning "$dir/onenode.out" && fail "one node, one link: warned"

run x 2 "${MPI[@]}" -np 2 -x COLLKIT_RANKS_PER_NODE "$B" --pingpong -b 8 -e 64 -n 2 > "$dir/bad.txt"
rc=$?
[ $rc != 0 ] || fail "COLLKIT_RANKS_PER_NODE=x: exit 0"
has "$dir/bad.txt" "COLLKIT_RANKS_PER_NODE='\{0,1\}x"

[ $fails = 0 ] && echo "links ok" || echo "$fails failure(s)"
exit $((fails != 0))
