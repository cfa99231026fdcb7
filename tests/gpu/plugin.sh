#!/bin/sh
# plugin.sh BIN MPIRUN [mpirun args... -n 1] — the CUDA plug-in
# (lib/libcollkit_cuda.so) is opened when device memory is asked for:
#   - from bin/, collcheck and collbench find it and it loads (every library
#     function it calls is in the program): device memory then works, or, on
#     a machine without a GPU, the transport itself says "no CUDA device";
#   - a copy of collcheck where no lib/ holds the plug-in still runs host
#     memory, and refuses device memory with "CUDA support not available:"
#     and the loader's reason, exit status non-zero (never a crash);
#   - one where lib/ holds a plug-in of another collkit (its interface stamp
#     differs, or it has none) refuses it by that reason, never calls it.
bin=$1; shift
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
small="--algo ring --count 3 --dtype f32 --op sum --inplace 0 --inputs exact --repeat 1"
"$@" "$bin/collcheck" --device cuda $small > "$dir/check.txt" 2>&1; rc=$?
{ [ $rc -eq 0 ] || grep -q "no CUDA device" "$dir/check.txt"; } && ! grep -q "CUDA support not available" "$dir/check.txt" && ok \
  || { bad "collcheck --device cuda (rc $rc)"; cat "$dir/check.txt"; }
"$@" "$bin/collbench" --device cuda --algo ring -b 8 -e 8 -n 1 -w 0 > "$dir/bench.txt" 2>&1; rc=$?
{ [ $rc -eq 0 ] || grep -q "no CUDA device" "$dir/bench.txt"; } && ! grep -q "CUDA support not available" "$dir/bench.txt" && ok \
  || { bad "collbench --device cuda (rc $rc)"; cat "$dir/bench.txt"; }
mkdir "$dir/bin" && cp "$bin/collcheck" "$dir/bin/"
"$@" "$dir/bin/collcheck" --device host $small > "$dir/host.txt" 2>&1 && grep -q "^2 passed, 0 failed" "$dir/host.txt" && ok \
  || { bad "collcheck without the plug-in, host memory"; cat "$dir/host.txt"; }
"$@" "$dir/bin/collcheck" --device cuda $small > "$dir/none.txt" 2>&1; rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "collkit: CUDA support not available: .*libcollkit_cuda" "$dir/none.txt" && ok \
  || { bad "collcheck without the plug-in, device memory (rc $rc)"; cat "$dir/none.txt"; }
# A plug-in whose entry points are no functions: called, it would crash.
mkdir "$dir/lib"
for stamp in "const unsigned long long ck_cuda_plugin_stamp = 1;:was built for another collkit" ":is no collkit plug-in of this version"; do
  printf '%s\n' "${stamp%%:*}" 'int ck_transport_cuda_create, ck_sym_allreduce, ck_cuda_gpu_count;' \
    'char ck_algo_nccl[256], ck_rs_nccl[256], ck_ag_nccl[256];' > "$dir/other.c"
  ${CC:-cc} -shared -fPIC -o "$dir/lib/libcollkit_cuda.so" "$dir/other.c" || { bad "cannot build a stand-in plug-in"; continue; }
  "$@" "$dir/bin/collcheck" --device cuda $small > "$dir/other.txt" 2>&1; rc=$?
  [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "CUDA support not available: libcollkit_cuda.so ${stamp#*:}" "$dir/other.txt" && ok \
    || { bad "collcheck with another collkit's plug-in (rc $rc)"; cat "$dir/other.txt"; }
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
