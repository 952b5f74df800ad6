#!/usr/bin/env bash
# Session 10 device call 4: two column-part wgmma groups restricted to 128-row tiles on two warpgroups (working tree)
# against one group (.exp/hoist = 3756c99), interleaved per shape, two rounds; 4096x4096x7168 (256x128: the same
# code in both) is the noise control. Then the FP8 GPU tests on the working tree.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=$PWD/build-gpu/tilegemm
T=$OUT/tables.md
one="TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/hoist/device"
echo "# one group (first) vs two column parts" > $T
for s in "4096 2112 7168" "128 24576 1536" "128 32768 512" "128 7168 2048" "128 7168 16384" "4096 4096 7168"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/ab-$1x$2x$3 timeout 100 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 -- "- $one" "-" > /dev/null 2>&1
  { echo; echo "## $1x$2x$3"; cat $R/ab-$1x$2x$3/sweep.md; } >> $T
done
GPU_SUITE_STEPS="gpu" GPU_SUITE_TIMEOUT_GPU=220 GPU_SUITE_GTEST_FILTER='*Fp8*' OUT=$R/t scripts/gpu-suite > $R/gpu-tests.out 2>&1
{ echo; echo "## FP8 GPU tests"; cat $R/t/summary.md; } >> $T
tar czf $OUT/rest.tgz -C $R . 2>/dev/null
cat $T
