#!/bin/sh
# shm_small.sh BINDIR "MPIRUN [FLAGS]" — shared memory that is small or runs
# short. In a mount namespace of its own (unshare -m; skipped, exit 77, where
# that is not allowed) /dev/shm is a 12 MB and then a 64 MB tmpfs, a
# container's sizes: tagtrain's default (twoshot on the shm transport) and
# collbench's oneshot, twoshot and ring up to 16 MB must run as everywhere
# else (the segments are memfds: /dev/shm's size does not limit them), and
# leave /dev/shm as they found it. Then a shared heap too small for the
# single-copy regions (COLLKIT_SHM_HEAP=1M): every call falls back to ring on
# every rank, said once, with the same results.
set -u
BIN=$1 MPIRUN=$2
W=$(mktemp -d /tmp/collkit_shm_small.XXXXXX)
trap 'rm -rf "$W"' EXIT
if ! unshare -m true 2> /dev/null; then echo "unshare -m is not allowed here: skipped"; exit 77; fi
"$BIN/tagsynth" --rows 480 --seed 1 --out "$W/d.csv" > /dev/null &&
"$BIN/tagsynth" --rows 120 --seed 2 --out "$W/h.csv" > /dev/null || { echo "FAIL: tagsynth"; exit 1; }
cat > "$W/run.sh" <<EOS
#!/bin/sh
# inside the namespace: SIZE [ENV...]
size=\$1; shift
mount -t tmpfs -o size=\$size tmpfs /dev/shm || exit 77
before=\$(ls /dev/shm | sort)
env "\$@" $MPIRUN -np 3 "$BIN/tagtrain" --data "$W/d.csv" --holdout "$W/h.csv" --features 256 --hidden 8 \\
    --epochs 2 --quiet --no-save > "$W/t.out" 2>&1 || { echo "tagtrain failed"; cat "$W/t.out"; exit 1; }
env "\$@" $MPIRUN -np 3 "$BIN/collbench" --transport shm --algo oneshot,twoshot,ring -b 8 -e 16M -f 64 -n 2 -w 1 \\
    --model none > "$W/b.out" 2>&1 || { echo "collbench failed"; cat "$W/b.out"; exit 1; }
grep -q "error" "$W/b.out" && { echo "collbench has error rows"; cat "$W/b.out"; exit 1; }
cat "$W/t.out" "$W/b.out" > "$W/all-\$size"
after=\$(ls /dev/shm | sort)
[ "\$before" = "\$after" ] || { echo "left in /dev/shm: \$after"; exit 1; }
EOS
pass=0 fail=0
for size in 12m 64m; do
  unshare -m sh "$W/run.sh" $size > "$W/o" 2>&1; rc=$?
  [ $rc -eq 77 ] && { echo "cannot mount a tmpfs in the namespace: skipped"; exit 77; }
  if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: /dev/shm of $size: $(cat "$W/o")"; fi
done
unshare -m sh "$W/run.sh" 64m COLLKIT_SHM_HEAP=1M > "$W/o" 2>&1; rc=$?
n=$(grep -c "shared memory runs short, so .* calls that cannot take it run ring" "$W/all-64m" 2>/dev/null)
if [ $rc -eq 0 ] && [ "$n" = 2 ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: COLLKIT_SHM_HEAP=1M: rc $rc, the fallback said $n times (want once per program): $(cat "$W/o" "$W/all-64m" 2>/dev/null)"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
