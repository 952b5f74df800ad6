#!/usr/bin/env bash
# Session 11 device call 8 (HEAD with the selector taking FP8 two-block stages for small M, long K): the FP8 dense,
# masked and determinism GPU tests on the selector's picks, then the FP8 DeepSeek suite.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
timeout 170 build-gpu/tilegemm_gpu_tests --gtest_filter='Shapes/Fp8Dense.*:*Fp8MGroupedMasked*:*Fp8SplitDeterminism*' > $OUT/gpu-tests.log 2>&1
grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED' $OUT/gpu-tests.log
timeout 150 build-gpu/tilegemm bench --suite deepseek --dtype fp8 --json $OUT/fp8-deepseek.json --md $OUT/fp8-deepseek.md > $R/bench.log 2>&1
tar czf $OUT/rest.tgz -C $R . 2>/dev/null; rm -rf $R
sed -n '/^| M /,/^Geometric/p' $OUT/fp8-deepseek.md
