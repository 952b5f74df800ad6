#!/usr/bin/env bash
# Session 9 device call 1: 1x2 clusters sharing (multicasting) the A tile in the FP8 kernel. GPU tests of the forced
# 1x2 cases and of every existing cluster case, then A/B at M=4096: the 256x128 tile without and with the 1x2 cluster,
# two interleaved rounds (scripts/config-sweep).
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=200 GPU_SUITE_GTEST_FILTER='MulticastA/*:*cluster*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED) +\]" $R/suite.log > $OUT/tests.txt
B=$PWD/build-gpu/tilegemm
T=$OUT/table.md
: > $T
for s in "4096 4096 7168" "4096 7168 16384" "4096 24576 1536" "4096 32768 512" "4096 7168 2048"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/sweep-$1x$2x$3 timeout 150 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 -- \
    "block_m=256,block_n=128,cluster_m=1,cluster_n=1" "block_m=256,block_n=128,cluster_n=2"
  cat $R/sweep-$1x$2x$3/sweep.md >> $T
done
cat $OUT/summary.md $T
grep -c OK $OUT/tests.txt; grep FAILED $OUT/tests.txt | head
tar czf $OUT/r.tgz -C $OUT r
