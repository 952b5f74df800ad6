#!/usr/bin/env bash
# Session 9 device call 2: does A multicast (1x2) pay at long K only? 256x128 at M=4096, K from 7168 to 32768 at
# N = 7168 and 4096 (plus N = 2048 at K = 16384): 1x1, 1x2, and 1x1 on 2 stages (how much the ring depth matters),
# two interleaved rounds. BF16 2x1 cluster GPU tests (the B load was renamed).
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=150 GPU_SUITE_GTEST_FILTER='*Clustered*:JitLaunch.*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED) +\]" $R/suite.log > $OUT/tests.txt
B=$PWD/build-gpu/tilegemm
T=$OUT/table.md
: > $T
for s in "4096 7168 7168" "4096 7168 16384" "4096 7168 32768" "4096 4096 16384" "4096 4096 32768" "4096 2048 16384"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/sweep-$1x$2x$3 timeout 200 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 -- \
    "block_m=256,block_n=128,cluster_m=1,cluster_n=1" "block_m=256,block_n=128,cluster_n=2" \
    "block_m=256,block_n=128,cluster_m=1,cluster_n=1,stages=2"
  cat $R/sweep-$1x$2x$3/sweep.md >> $T
done
cat $OUT/summary.md $T
grep -c OK $OUT/tests.txt; grep FAILED $OUT/tests.txt | head
tar czf $OUT/r.tgz -C $OUT r
