#!/bin/sh
# probe.sh COLLBENCH — collbench --gpus, the GPU count scripts/bench.sh and
# scripts/gpu-check.sh decide on: with CUDA_VISIBLE_DEVICES empty it must say
# "none" (exit 3, with a reason) on any machine; as launched, either a count
# of at least 1 (exit 0) or that same "none" (exit 3, no GPU or no CUDA in
# this build). Exit 1 (a GPU that does not work) fails, with CUDA's message.
cb=$1
out=$(CUDA_VISIBLE_DEVICES= "$cb" --gpus 2>&1); rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL: CUDA_VISIBLE_DEVICES='' gave exit $rc, not 3: $out"; exit 1; }
case $out in *"no CUDA device"*|*"without CUDA"*) ;; *) echo "FAIL: no reason given: $out"; exit 1 ;; esac
echo "hidden GPUs: $out"
out=$("$cb" --gpus 2>&1); rc=$?
case $rc in
  0) [ "$out" -ge 1 ] 2>/dev/null || { echo "FAIL: exit 0 without a count: $out"; exit 1; }
     echo "$out GPU(s) visible${CUDA_VISIBLE_DEVICES+ (CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES)}" ;;
  3) echo "no GPU here: $out" ;;
  *) echo "FAIL: collbench --gpus exit $rc: $out"; exit 1 ;;
esac
