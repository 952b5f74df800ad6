#!/usr/bin/env bash
# Session 10 device call 6: at HEAD, the FP8 GPU cases that reach the two-part (128x192) and one-part consumer
# paths (scale-straddling tiles, the selector's 128x192 and 256x128 picks, 1D1D, K-grouped, masked, determinism),
# then the FP8 masked suite (issue #5: masked within 10% of contiguous).
set -u
GPU_SUITE_STEPS="build gpu" GPU_SUITE_TIMEOUT_GPU=120 \
  GPU_SUITE_GTEST_FILTER='ScaleStraddle/*:Representative/Fp8Dense*:Shapes/Fp8Dense*m4096_n2112*:Shapes/Fp8Dense*m4096_n7168_k16384*:Shapes/Fp8Dense*1d1d*:Shapes/Fp8KGrouped*:Fp8SplitDeterminism*:Shapes/Fp8MGroupedMasked*:MulticastA/*' \
  scripts/gpu-suite > $OUT/gpu-suite.out 2>&1
timeout 60 build-gpu/tilegemm bench --suite masked --dtype fp8 --json $OUT/masked.json --md $OUT/masked.md > $OUT/masked.log 2>&1
cat $OUT/summary.md; grep "^| [0-9]" $OUT/masked.md | head -4
