#!/usr/bin/env bash
# Device call 3: two-atom BF16 stages: GPU tests + DeepSeek BF16 suite, new selection vs block_k=64 forced.
set -u
R=$OUT/r; mkdir -p $R
export TILEGEMM_COMMIT=${TILEGEMM_COMMIT:-wip}
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=250 GPU_SUITE_GTEST_FILTER='*TwoAtom*:DeepSeek/Bf16Gemm*:Representative*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=$PWD/build-gpu/tilegemm
timeout 120 $B bench --suite deepseek --dtype bf16 --json $R/bf16-new.json --md $R/bf16-new.md > $R/bench-new.log 2>&1
TILEGEMM_CONFIG_FILTER=block_k=64 timeout 120 $B bench --suite deepseek --dtype bf16 --json $R/bf16-bk64.json --md $R/bf16-bk64.md > $R/bench-bk64.log 2>&1
$B bench --compare $R/bf16-bk64.json $R/bf16-new.json > $R/compare.md 2>&1
cat $R/summary.md; cat $R/compare.md | head -40
tar czf $OUT/r.tgz -C $OUT r
