#!/usr/bin/env bash
# Session 9 device call 6: the GPU tests call 5's 330 s step did not reach (BF16 ragged / whole-wave stream-K, split-K
# on two-atom stages), at the same tree.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=200 GPU_SUITE_GTEST_FILTER='Ragged/StreamK.*:Shapes/SplitKTwoAtomStages.*:WholeWaves/StreamK.*:Shapes/CublasLtFp8.*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED|  SKIPPED) +\]" $R/suite.log > $OUT/tests.txt
cat $OUT/summary.md; grep -c OK $OUT/tests.txt; grep -v "OK \]" $OUT/tests.txt | head
