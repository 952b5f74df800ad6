#!/usr/bin/env bash
# Session 10 device call 3: (a) fp8-promotion-overlap probe, modes 0-3; (b) FP8 sub-blocks as two column-part wgmma
# groups (working tree) against one group (.exp/hoist = 3756c99's device code), DeepSeek and grouped suites,
# interleaved; (c) the FP8 GPU tests on the working tree.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=$PWD/build-gpu/tilegemm
T=$OUT/tables.md
{ echo "## probe"; timeout 60 .exp/fp8_promotion_overlap 2>&1; } > $T
one="TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/hoist/device"
SWEEP_OUT=$R/deepseek timeout 240 scripts/config-sweep $B --suite deepseek --dtype fp8 -- "- $one" "-" > /dev/null 2>&1
{ echo; echo "## deepseek: one group (first) vs two column parts"; cat $R/deepseek/sweep.md; } >> $T
SWEEP_OUT=$R/grouped timeout 150 scripts/config-sweep $B --suite grouped --dtype fp8 -- "- $one" "-" > /dev/null 2>&1
{ echo; echo "## grouped: one group (first) vs two column parts"; cat $R/grouped/sweep.md; } >> $T
GPU_SUITE_STEPS="gpu" GPU_SUITE_TIMEOUT_GPU=200 GPU_SUITE_GTEST_FILTER='*Fp8*' OUT=$R/t scripts/gpu-suite > $R/gpu-tests.out 2>&1
{ echo; echo "## FP8 GPU tests"; cat $R/t/summary.md; } >> $T
tar czf $OUT/rest.tgz -C $R . 2>/dev/null
cat $T
