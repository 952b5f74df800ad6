#!/usr/bin/env bash
# Session 8 device call 4: every GPU test at HEAD (the FP8 K loop specialised on the scale split, the selector's
# new FP8 M=4096 choices).
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=420 OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]" $R/suite.log > $OUT/tests.txt
grep -cE "^\[ +OK +\]" $OUT/tests.txt; grep -E "FAILED" $OUT/tests.txt | head
cat $OUT/summary.md
