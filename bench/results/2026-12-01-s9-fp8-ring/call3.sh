#!/usr/bin/env bash
# Session 9 device call 3: a four-stage ring for the FP8 256x128 tile, paid for with a four-pass epilogue (D staged
# 32 columns at a time through a 16 KB buffer instead of the whole 64 KB tile). GPU tests of the forced multi-pass
# epilogues (+ the representative set), then A/B: 256x128 on 3 stages with the one-pass epilogue vs 4 stages with
# four passes, the six M=4096 dense shapes and the grouped suite, two interleaved rounds.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=150 GPU_SUITE_GTEST_FILTER='EpiloguePasses/*:Representative/Fp8Dense.*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED) +\]" $R/suite.log > $OUT/tests.txt
B=$PWD/build-gpu/tilegemm
T=$OUT/table.md
: > $T
V1="block_m=256,block_n=128,stages=3,d_passes=1"
V2="block_m=256,block_n=128,stages=4,d_passes=4"
for s in "4096 4096 7168" "4096 7168 16384" "4096 24576 1536" "4096 32768 512" "4096 7168 2048" "4096 2112 7168"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/sweep-$1x$2x$3 timeout 150 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 -- "$V1" "$V2"
  cat $R/sweep-$1x$2x$3/sweep.md >> $T
done
SWEEP_ROUNDS=2 SWEEP_OUT=$R/sweep-grouped timeout 200 scripts/config-sweep $B --suite grouped --dtype fp8 -- "$V1" "$V2"
cat $R/sweep-grouped/sweep.md >> $T
cat $OUT/summary.md $T
grep -c OK $OUT/tests.txt; grep FAILED $OUT/tests.txt | head
tar czf $OUT/r.tgz -C $OUT r
