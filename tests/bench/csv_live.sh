#!/usr/bin/env bash
# csv_live.sh COLLBENCH MPIRUN [FLAGS...] — collbench --csv writes each row as
# soon as it is measured: a sweep killed (SIGKILL, as a time limit does) after
# its first table rows leaves those rows in the CSV, complete. With rows kept
# until the end, the file would be missing or empty.
set -u
B=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
csv=$dir/live.csv
"$@" -np 1 "$B" --algo ring -b 8 -e 64M -f 2 -n 200 -w 1 -c 0 --model none --place out --csv "$csv" \
    > "$dir/out.txt" 2>&1 &
job=$!
pid=""
for _ in $(seq 1 1200); do   # up to 120 s for a loaded machine
  if [ "$(grep -c '^  ring ' "$dir/out.txt" 2>/dev/null)" -ge 2 ]; then
    pid=$(pgrep -n -f -- "--csv $csv"); break
  fi
  kill -0 $job 2>/dev/null || break
  sleep 0.1
done
[ -n "$pid" ] || { echo "FAIL: the sweep never printed two rows"; cat "$dir/out.txt"; exit 1; }
kill -KILL "$pid"
wait $job 2>/dev/null
shown=$(grep -c '^  ring ' "$dir/out.txt")
[ -s "$csv" ] || { echo "FAIL: no CSV after the kill ($shown rows shown)"; exit 1; }
head -1 "$csv" | grep -q '^algo,p,bytes,' || { echo "FAIL: no header: $(head -1 "$csv")"; exit 1; }
rows=$(tail -n +2 "$csv" | grep -c '^ring,1,[0-9]*,[0-9]*,f32,sum,out,[0-9]*,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,-\?[0-9]*,[a-z0-9.-]*,on,[0-9.]*,[0-9.]*$')
total=$(tail -n +2 "$csv" | wc -l)
[ "$rows" -ge "$shown" ] && [ "$rows" -eq "$total" ] ||
  { echo "FAIL: $shown rows shown, $total in the CSV, $rows of them complete"; cat "$csv"; exit 1; }
[ "$(tail -c 1 "$csv" | od -An -c | tr -d ' ')" = '\n' ] || { echo "FAIL: the last row is cut off"; exit 1; }
echo "killed after $shown rows shown: the CSV has $rows complete rows"
