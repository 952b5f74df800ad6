#!/usr/bin/env bash
# Session 10 device call 2: (a) fp8-promotion-overlap probe (cycles per K block, 1 or 2 warpgroups, with or without
# the promotion); (b) FP8 descriptors built before the full-barrier wait (working tree) against the base device code;
# (c) SM clock/power of the two furthest M=4096 shapes; (d) the FP8 GPU tests on the working tree.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=$PWD/build-gpu/tilegemm
T=$OUT/tables.md
{ echo "## probe"; timeout 60 .exp/fp8_promotion_overlap 2>&1; } > $T
base="TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/base/device"
for s in "4096 7168 16384" "4096 4096 7168" "4096 7168 2048"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/ab-$2x$3 timeout 150 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 -- "- $base" "-" > /dev/null 2>&1
  { echo; echo "## descriptors before the wait: $1x$2x$3 (base first)"; cat $R/ab-$2x$3/sweep.md; } >> $T
done
{ echo; echo "## clocks"; } >> $T
for s in "4096 7168 16384" "4096 4096 7168"; do
  set -- $s
  { echo "### $1x$2x$3"; timeout 60 scripts/power-trace $R/p-$2x$3.csv $B bench --m $1 --n $2 --k $3 --dtype fp8 --rep-ms 2000 2>&1 | grep -E "^\| [0-9]{2}:|ours"; } >> $T
done
GPU_SUITE_STEPS="gpu" GPU_SUITE_TIMEOUT_GPU=200 GPU_SUITE_GTEST_FILTER='*Fp8*' OUT=$R/t scripts/gpu-suite > $R/gpu-tests.out 2>&1
{ echo; echo "## FP8 GPU tests"; cat $R/t/summary.md; } >> $T
tar czf $OUT/rest.tgz -C $R . 2>/dev/null
cat $T
