#!/bin/bash
# cluster.sh PART SRCDIR BINDIR "MPIRUN [FLAGS]" — collkit on an emulated
# cluster (scripts/cluster: nodes in namespaces on a bridge of their own).
# Every part makes its cluster, under a name of its own, and removes it at the
# end, also on failure or a signal; then nothing of it may be left
# (namespaces, the cluster's folder, its processes, names in /dev/shm).
#   smoke   2 nodes: ranks on both with their own hostname, PID namespace and
#           /dev/shm; a variable of the launching shell reaches the ranks
#           only through mpirun -x; the link shaped and unshaped; a partition cuts
#           node2 off and heal brings it back (seconds)
#   check   collcheck --algo all --quick at 2x2 and 3x2, on every host
#           transport collcheck offers
#   train   tagtrain at 2x2 ends equal to the same p on one node (ckptdiff)
#   faults  a rank on node2 killed (-9), stopped (SIGSTOP): every process of
#           the job on every node ends within two watchdog bounds, the rank
#           named; node2 cut off: every rank ends within two bounds, and the
#           whole job within three where TCP gives up in seconds (--tcp-retries 3)
# MPIRUN: the one-node launcher of the tests (train's reference run).
# Exit 77 (skipped) where namespaces cannot be made here.
set -u
PART=$1 SRC=$2 BIN=$3 MPIRUN1=$4
CLUSTER="$SRC/scripts/cluster"
NAME=ck$$
C="$CLUSTER --name $NAME"
T=5                      # COLLKIT_TIMEOUT in the fault runs: the bound
HANG=90                  # a run still going after this is a hang
W=$(mktemp -d /tmp/collkit_cluster.XXXXXX)
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
shm_names() { ls /dev/shm 2>/dev/null | grep collkit | sort; }
SHM_BEFORE=$(shm_names)

cleanup() { $C down > /dev/null 2>&1; rm -rf "$W"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# up N: the cluster, or this test skipped with the tool's reason.
up() {
  $C up "$@" > "$W/up.out" 2>&1
  rc=$?
  [ $rc -eq 77 ] && { cat "$W/up.out"; echo "SKIP: $(tail -1 "$W/up.out")"; exit 77; }
  [ $rc -eq 0 ] || { echo "FAIL: cluster up $*: $(cat "$W/up.out")"; exit 1; }
  MPIRUN="$($C dir)/mpirun"
}

# Nothing of the cluster left: namespaces, folder, processes, /dev/shm names.
down_and_check() {
  local d
  d=$($C dir)
  $C down > "$W/down.out" 2>&1
  check '[ $? -eq 0 ]' "cluster down: $(cat "$W/down.out")"
  check '! ip netns list | grep -q "^ckc-$NAME-"' "namespaces left: $(ip netns list | grep "^ckc-$NAME-")"
  check '[ ! -e "$d" ]' "the cluster's folder $d is left"
  check '! pgrep -f "$d/" > /dev/null' "processes left: $(pgrep -af "$d/")"
  left=$(shm_names | grep -vxF "$SHM_BEFORE" | grep .)
  check '[ -z "$left" ]' "left in /dev/shm: $left"
}

# ------------------------------------------------------------------ smoke
smoke() {
  up 2
  X=here $MPIRUN -np 4 sh -c 'echo "$OMPI_COMM_WORLD_RANK $(hostname) pid=$$ x=${X:-unset} shm=$(ls /dev/shm | grep -c smoke)";
                               touch /dev/shm/smoke-$OMPI_COMM_WORLD_RANK' > "$W/o" 2>&1
  check '[ $? -eq 0 ]' "mpirun on the cluster: $(cat "$W/o")"
  check '[ "$(grep -c " node1 " "$W/o")" = 2 ] && [ "$(grep -c " node2 " "$W/o")" = 2 ]' "not 2 ranks on each node: $(cat "$W/o")"
  # Ranks see their node's PID namespace (small pids), not this machine's.
  check '! grep -q "pid=[0-9]\{4,\}" "$W/o"' "a rank's pid is not of its node's PID namespace: $(cat "$W/o")"
  # mpirun runs on the head (a login node): no rank has the launching
  # shell's variables, as over ssh, unless mpirun -x passes them on.
  check '! grep -q "x=here" "$W/o"' "the launching shell's variable reached a node without -x: $(cat "$W/o")"
  X=here $MPIRUN -np 4 -x X sh -c 'echo "$(hostname) x=${X:-unset} shm=$(ls /dev/shm | grep -c smoke)"' > "$W/o" 2>&1
  check '[ "$(grep -c "x=here" "$W/o")" = 4 ]' "mpirun -x X does not reach every rank: $(cat "$W/o")"
  # Each node's /dev/shm is its own: two files on each node, none here.
  check '[ "$(grep -c "shm=2" "$W/o")" = 4 ] && ! ls /dev/shm | grep -q "^smoke-"' "/dev/shm is not per node: $(cat "$W/o")"
  $C shape 100mbit > "$W/s" 2>&1
  check '[ $? -eq 0 ] && $C status | grep -q "node2 .*tbf 100Mbit"' "shape 100mbit: $(cat "$W/s"; $C status)"
  $C shape off node2 > "$W/s" 2>&1
  check '$C status | grep -q "node2 .*unshaped" && $C status | grep -q "node1 .*tbf"' "shape off node2: $($C status)"
  check '! $C shape fast > "$W/s" 2>&1 && grep -q "rate .fast." "$W/s"' "a rate tc does not know is refused: $(cat "$W/s")"
  # A connection to a closed port: refused at once when connected, no answer
  # at all when cut off.
  probe() { $C exec node1 timeout 2 bash -c 'echo > /dev/tcp/'"$1"'/9' 2>/dev/null; echo $?; }
  net=$(cat "$($C dir)/subnet")
  check '[ "$(probe $net.12)" = 1 ]' "node1 cannot reach node2 before the partition"
  $C partition node2 > /dev/null
  check '[ "$(probe $net.12)" = 124 ] && $C status | grep -q "node2 .*link DOWN"' "partition node2 does not cut it off"
  $C heal node2 > /dev/null
  check '[ "$(probe $net.12)" = 1 ]' "heal node2 does not bring it back"
  $MPIRUN -np 4 true > "$W/o" 2>&1
  check '[ $? -eq 0 ]' "mpirun after heal: $(cat "$W/o")"
  # A run killed before down: its leftovers go with down.
  # A run killed before down, and the cluster's own files lost: down finds
  # the rest from the namespaces' names.
  ( $MPIRUN -np 4 sleep 100 > /dev/null 2>&1 & )
  sleep 2
  rm -f "$($C dir)"/*.pid "$($C dir)/nodes"
  down_and_check
}

# ------------------------------------------------------------------ check
# Host transports collcheck offers (mpi, shm, and any added later), CUDA aside.
transports() { "$BIN/collcheck" --help | sed -n 's/.*--transport \([a-z|-]*\).*/\1/p' | head -1 | tr '|' '\n' | grep -v cuda; }

check_at() {   # check_at NODES RANKS_PER_NODE
  up "$1" --slots "$2"
  local p=$(($1 * $2)) t
  for t in $(transports); do
    nice timeout -k 10 600 $MPIRUN -np $p -x COLLKIT_TIMEOUT=20 "$BIN/collcheck" --algo all --quick \
      --transport "$t" > "$W/c" 2>&1
    rc=$?
    sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$W/c" | tail -1)
    # Across nodes shm becomes the mixed transport (shared memory inside a
    # node, MPI between), where oneshot and twoshot run as ring: no failure
    # of any kind is expected.
    other=$(grep ' FAIL ' "$W/c" | head -3)
    check '[ -n "$sum" ] && [ -z "$other" ] && [ $rc -eq 0 ]' \
          "collcheck --transport $t at $1x$2: rc $rc, $sum: $other $(tail -5 "$W/c")"
    echo "collcheck --transport $t at $1x$2: $sum"
  done
  down_and_check
}

# ------------------------------------------------------------------ train
train() {
  "$BIN/tagsynth" --rows 720 --seed 1 --out "$W/d.csv" > /dev/null || { echo "FAIL: tagsynth"; exit 1; }
  A="--data $W/d.csv --folds 5 --fold 5 --features 1024 --hidden 32 --epochs 2 --dropout 0 --quiet"
  nice $MPIRUN1 -np 4 "$BIN/tagtrain" $A --save "$W/one" > "$W/o" 2>&1
  check '[ $? -eq 0 ]' "tagtrain at p = 4 on one node: $(cat "$W/o")"
  up 2
  nice timeout -k 10 300 $MPIRUN -np 4 "$BIN/tagtrain" $A --save "$W/two" > "$W/o" 2>&1
  check '[ $? -eq 0 ]' "tagtrain at 2x2: $(cat "$W/o")"
  "$BIN/ckptdiff" "$W/one/last.ckpt" "$W/two/last.ckpt" > "$W/d" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "equal within 1e-05" "$W/d"' "2x2 against one node: rc $rc $(cat "$W/d")"
  echo "tagtrain 2x2 against one node: $(head -1 "$W/d")"
  down_and_check
}

# ------------------------------------------------------------------ faults
# Processes of the job in the nodes: pids of tagtrain (the ranks), or of
# tagtrain and orted (Open MPI's daemons).
job_on() {
  local pid
  for pid in $(ip netns pids "ckc-$NAME-$1" 2>/dev/null); do
    case $(cat /proc/$pid/comm 2>/dev/null) in tagtrain) echo "$pid" ;; orted) [ "${2:-}" = all ] && echo "$pid" ;; esac
  done
}
job_left() { for n in $(cat "$($C dir)/nodes"); do job_on "$n" "$1"; done; }
now() { date +%s.%N; }

# fault KIND: start a long training job, wait until it trains on node2, then
# KIND one rank of node2 (kill, stop) or node2 (partition: its link cut) and
# time until every process of the job on every node, and mpirun, is gone.
# After a partition with the kernel's TCP settings (partition-wait) mpirun and
# node2's daemon wait for each other until TCP gives up: only the ranks are
# timed, and heal ends the rest.
fault() {
  local kind=$1 pid rank t0 t1 tr left mp alive="" what=all took ranks_took limit
  nice $MPIRUN -np 4 -x COLLKIT_TIMEOUT=$T "$BIN/tagtrain" $RUN > "$W/f.out" 2>&1 &
  mp=$!
  local until=$(($(date +%s) + HANG))
  while [ "$(job_on node2 | wc -l)" != 2 ] && [ $(date +%s) -lt $until ]; do sleep 0.2; done
  sleep 3   # into the training loop
  pid=$(job_on node2 | head -1)
  if [ -z "$pid" ]; then
    check false "$kind: the job did not start on node2 within $HANG s: $(cat "$W/f.out")"
    kill -KILL $mp 2>/dev/null; wait $mp 2>/dev/null; return
  fi
  rank=$(tr '\0' '\n' < /proc/$pid/environ | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
  t0=$(now)
  case $kind in
    kill) kill -KILL "$pid" ;;
    stop) kill -STOP "$pid" ;;
    partition*) $C partition node2 > /dev/null ;;
    # node2's daemon stopped too: MPI_Abort on node2 cannot complete at all,
    # and only the ranks' own end (watch.c) ends them.
    daemon) kill -STOP $(ip netns pids "ckc-$NAME-node2" | while read -r p; do
                           [ "$(cat /proc/$p/comm)" = orted ] && echo "$p"; done)
            $C partition node2 > /dev/null ;;
  esac
  case $kind in partition-wait|daemon) what=ranks ;; esac
  until=$(($(date +%s) + HANG)) tr=""
  while [ $(date +%s) -lt $until ]; do
    [ -z "$tr" ] && [ -z "$(job_left ranks)" ] && tr=$(now)
    left=$(job_left $what)
    [ -z "$left" ] && { [ $what = ranks ] || ! kill -0 $mp 2>/dev/null; } && break
    sleep 0.1
  done
  t1=$(now)
  took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  ranks_took=$(awk -v a="$t0" -v b="${tr:-$t1}" 'BEGIN { printf "%.1f", b - a }')
  check '[ -z "$left" ]' "$kind: processes left after $HANG s: $left"
  check 'awk "BEGIN { exit !($ranks_took <= 2 * $T) }"' "$kind (rank $rank): the ranks took $ranks_took s to end (bound $T s)"
  # After a partition, mpirun and node2's daemon end when TCP gives up on
  # their connection (about 3 s at tcp_retries2 = 3), after the ranks.
  limit=$([ $kind = partition ] && echo 3 || echo 2)
  check 'awk "BEGIN { exit !($took <= $limit * $T) }"' "$kind (rank $rank): the job took $took s to end (bound $T s, at most $limit bounds)"
  if [ $what = ranks ]; then
    alive=$(kill -0 $mp 2>/dev/null && echo "mpirun still waits for node2's daemon" || echo "mpirun ended")
    [ $kind = daemon ] && { $C down > /dev/null; up 2; }   # a stopped daemon: a new cluster
    $C heal node2 > /dev/null
    for i in $(seq 1 100); do kill -0 $mp 2>/dev/null || break; sleep 0.1; done
  fi
  wait $mp 2> /dev/null
  case $kind in
    kill) check 'grep -q "process rank $rank .*exited on signal 9" "$W/f.out"' "kill: rank $rank not named: $(cat "$W/f.out")" ;;
    # Named by the roll call, or by the all-reduce's own wait on it.
    stop) check 'grep -q "rank $rank did not answer (stopped, stalled or gone)\|waited [0-9.]* s for [a-z]* of [0-9]* B \(from\|to\) rank $rank " "$W/f.out"' \
                "stop: rank $rank not named: $(cat "$W/f.out")" ;;
    partition*|daemon) check 'grep -q "watchdog: rank [0-9] waited [0-9.]* s for" "$W/f.out"' "$kind: no rank's watchdog line: $(cat "$W/f.out")" ;;
  esac
  echo "$kind (rank $rank on node2): every rank ended in $ranks_took s$([ $what = all ] && echo ", the job on every node in $took s") (bound $T s)${alive:+; $alive}"
  kill -KILL $mp 2>/dev/null; wait $mp 2>/dev/null
}

faults() {
  "$BIN/tagsynth" --rows 2000 --seed 1 --out "$W/d.csv" > /dev/null || { echo "FAIL: tagsynth"; exit 1; }
  # A flat all-reduce (auto would pick hier across nodes, whose waits name
  # the ranks of its node and cross groups, with the map to world ranks).
  RUN="--data $W/d.csv --features 2048 --hidden 32 --epochs 500 --val-frac 0.2 --dropout 0 --no-save --quiet --algo ring"
  up 2
  fault kill
  fault stop
  fault partition-wait
  fault daemon
  down_and_check
  # TCP giving up on a cut link within seconds (net.ipv4.tcp_retries2 = 3 in
  # every node): mpirun learns that node2's daemon is gone, and the job ends.
  up 2 --tcp-retries 3
  fault partition
  down_and_check
}

case $PART in
  smoke) smoke ;;
  check) check_at 2 2; check_at 3 2 ;;
  train) train ;;
  faults) faults ;;
  *) echo "usage: cluster.sh smoke|check|train|faults SRCDIR BINDIR MPIRUN" >&2; exit 2 ;;
esac
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
