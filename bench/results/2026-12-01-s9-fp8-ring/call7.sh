#!/usr/bin/env bash
# Session 9 device call 7: the two M=4096 FP8 shapes furthest from their bars, with other raster groups and with
# the 128x192 tile (its run-time scale choice is gone since cc04f81), two interleaved rounds.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
B=$PWD/build-gpu/tilegemm
T=$OUT/table.md
: > $T
for s in "4096 7168 16384" "4096 4096 7168"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/sweep-$1x$2x$3 timeout 200 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 -- \
    "-" "block_m=256,block_n=128,raster=2" "block_m=256,block_n=128,raster=4" "block_m=256,block_n=128,raster=16" \
    "block_m=128,block_n=192,cluster_m=1"
  cat $R/sweep-$1x$2x$3/sweep.md >> $T
done
cat $OUT/summary.md $T
tar czf $OUT/r.tgz -C $OUT r
