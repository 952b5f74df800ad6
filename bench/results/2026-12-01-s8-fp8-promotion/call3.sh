#!/usr/bin/env bash
# Session 8 device call 3: the FP8 suite ("all": 18 DeepSeek shapes, grouped contiguous and masked) twice with
# HEAD's kernels and selector; GPU tests of masked FP8 (their selector picks may move to 128x192).
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=120 GPU_SUITE_GTEST_FILTER='*Fp8MGroupedMasked*:Shapes/Fp8Dense.*m4096*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED) +\]" $R/suite.log > $OUT/tests.txt
B=$PWD/build-gpu/tilegemm
for i in 1 2; do
  timeout 240 $B bench --suite all --dtype fp8 --report $R/fp8-all-$i > $R/fp8-all-$i.log 2>&1
  cp $R/fp8-all-$i/report.md $OUT/fp8-all-$i.md; cp $R/fp8-all-$i/report.json $OUT/fp8-all-$i.json
done
cat $OUT/summary.md
grep -E "^\| (64|128|4096|4×|8×)" $OUT/fp8-all-1.md | head -40
grep -E "Geometric|^\| [48]x8192|^\| [48]x4096" $OUT/fp8-all-2.md | head -12
tar czf $OUT/r.tgz -C $OUT r
