#!/usr/bin/env bash
# Session 9 device call 4: where does the four-stage ring (with its four-pass epilogue) pay for the 256x128 tile?
# Long K at three widths (K 12288/16384/32768, N 2048/4096/7168), plus both it and the 1x2 A-multicast cluster at
# 4096x7168x16384; 3 stages + one-pass epilogue as the base, two interleaved rounds.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
B=$PWD/build-gpu/tilegemm
T=$OUT/table.md
: > $T
V1="block_m=256,block_n=128,stages=3,d_passes=1,cluster_n=1"
V2="block_m=256,block_n=128,stages=4,d_passes=4,cluster_n=1"
V3="block_m=256,block_n=128,stages=4,d_passes=4,cluster_n=2"
for s in "4096 7168 12288" "4096 4096 12288" "4096 2048 32768" "4096 4096 32768" "4096 7168 32768"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/sweep-$1x$2x$3 timeout 150 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 -- "$V1" "$V2"
  cat $R/sweep-$1x$2x$3/sweep.md >> $T
done
SWEEP_ROUNDS=2 SWEEP_OUT=$R/sweep-4096x7168x16384 timeout 150 scripts/config-sweep $B --m 4096 --n 7168 --k 16384 --dtype fp8 -- "$V1" "$V2" "$V3"
cat $R/sweep-4096x7168x16384/sweep.md >> $T
cat $OUT/summary.md $T
tar czf $OUT/r.tgz -C $OUT r
