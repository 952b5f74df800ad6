#!/usr/bin/env bash
# Session 11 device call 6: what the timer allows at small M (bench/probes/timer-floor: an empty kernel and a kernel
# that only reads B, under the harness's timing), then the DeepSeek suites at HEAD (FP8 and BF16) in the same call.
set -u
R=$OUT/r; mkdir -p $R
nvcc -O3 -std=c++17 -arch=sm_90a -o $R/probe bench/probes/timer-floor/probe.cu > $R/nvcc.log 2>&1
$R/probe > $OUT/timer-floor.md 2>&1
GPU_SUITE_STEPS="smi build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
for dt in fp8 bf16; do
  timeout 200 build-gpu/tilegemm bench --suite deepseek --dtype $dt --json $OUT/$dt-deepseek.json --md $OUT/$dt-deepseek.md > $R/$dt.log 2>&1
done
tar czf $OUT/rest.tgz -C $R --exclude=probe . 2>/dev/null; rm -rf $R
cat $OUT/timer-floor.md
