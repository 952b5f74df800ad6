#!/usr/bin/env bash
# Session 10 device call 5: the FP8 DeepSeek and grouped suites at HEAD (default harness), for issue #5's tables.
set -u
GPU_SUITE_STEPS="smi build bench" GPU_SUITE_BENCH_ARGS="--suite deepseek --dtype fp8" GPU_SUITE_TIMEOUT_BENCH=200 scripts/gpu-suite > $OUT/gpu-suite.out 2>&1
timeout 100 scripts/power-trace build-gpu/grouped-power.csv build-gpu/tilegemm bench --suite grouped --dtype fp8 --json $OUT/grouped.json --md $OUT/grouped.md > $OUT/grouped.log 2>&1
grep -E "Geometric|^\| [0-9]{2}:" $OUT/bench.md $OUT/suite.log $OUT/grouped.log | head -40
tail -8 $OUT/grouped.md
