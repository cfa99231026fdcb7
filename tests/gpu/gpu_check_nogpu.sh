#!/bin/sh
# gpu_check_nogpu.sh ROOT — scripts/gpu-check.sh on a node whose nvidia-smi
# finds no GPU: it must say so at once, in its output and its report, and
# exit 3 (not 0, not a build failure), without building anything.
root=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' > "$dir/bin/nvidia-smi"
chmod +x "$dir/bin/nvidia-smi"
PATH="$dir/bin:$PATH" "$root/scripts/gpu-check.sh" "$dir/build" > "$dir/out.txt" 2>&1; rc=$?
cat "$dir/out.txt"
[ "$rc" -eq 3 ] || { echo "FAIL: exit $rc, expected 3"; exit 1; }
grep -q "NO GPU ON THIS NODE" "$dir/out.txt" || { echo "FAIL: the output does not say there is no GPU"; exit 1; }
grep -q "No devices were found" "$dir/build/gpu-check/report.md" || { echo "FAIL: the report lacks nvidia-smi's words"; exit 1; }
[ ! -e "$dir/build/CMakeCache.txt" ] || { echo "FAIL: it configured a build anyway"; exit 1; }
echo "PASS: exit 3, said so, nothing built"
