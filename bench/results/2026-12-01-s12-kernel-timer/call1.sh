#!/usr/bin/env bash
# Session 12 call 1: kernel timer + read-B column on the DeepSeek suites, both timers, both dtypes.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=45c6942 PATH=/usr/local/cuda/bin:$PATH
{ ls -la /usr/local/cuda/lib64/libcupti* /usr/local/cuda/extras/CUPTI/lib64/ 2>&1; echo LD=$LD_LIBRARY_PATH; nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv; } > $W/env.txt 2>&1
GPU_SUITE_STEPS="smi build" OUT=$W/suite scripts/gpu-suite > $W/build.txt 2>&1
build-gpu/tilegemm_gpu_tests --gtest_filter='BenchKernelTimer*:BenchFlushGpu*' > $R/tests.txt 2>&1
for dt in fp8 bf16; do for t in kernel events; do
  timeout 200 build-gpu/tilegemm bench --suite deepseek --dtype $dt --timer $t --read-b --json $W/$dt-$t.json --md $R/$dt-$t.md > $W/$dt-$t.log 2>&1
done; done
tar czf $R/work.tgz -C $R work
