#!/usr/bin/env bash
# Session 9 device call 5, at HEAD (A multicast kept, selector unchanged): every GPU test; the FP8 suite ("all");
# and split-K re-measured against data-parallel on three small-M shapes of each dtype after session 8's scheduler
# change (5c1a435 moved the split scheduler's counts from registers into recomputation).
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=330 OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED|  SKIPPED) +\]" $R/suite.log > $OUT/tests.txt
B=$PWD/build-gpu/tilegemm
timeout 200 $B bench --suite all --dtype fp8 --report $R/fp8-all > $R/fp8-all.log 2>&1
cp $R/fp8-all/report.md $OUT/fp8-all.md; cp $R/fp8-all/report.json $OUT/fp8-all.json
T=$OUT/split-table.md
: > $T
for dt in bf16 fp8; do
  for s in "64 2112 7168" "64 7168 16384" "128 4096 7168"; do
    set -- $s
    SWEEP_OUT=$R/split-$dt-$1x$2x$3 timeout 60 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype $dt -- \
      "TILEGEMM_GEMM_SCHEME=data-parallel" "TILEGEMM_GEMM_SCHEME=split-k"
    cat $R/split-$dt-$1x$2x$3/sweep.md >> $T
  done
done
cat $OUT/summary.md $T
grep -E "Geometric|^\| (4096|4×|8×)" $OUT/fp8-all.md | head -20
grep -c OK $OUT/tests.txt; grep FAILED $OUT/tests.txt | head
tar czf $OUT/r.tgz -C $OUT r
