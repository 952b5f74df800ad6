#!/usr/bin/env bash
# Session 12 call 6 (105bd3c): every FP8 GPU test + the kernel-timer tests; then the FP8 DeepSeek suite under both
# timers with the read of B.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=105bd3c PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
for t in kernel events; do
  timeout 120 build-gpu/tilegemm bench --suite deepseek --dtype fp8 --timer $t --read-b --json $W/fp8-$t.json --md $R/fp8-$t.md > $W/fp8-$t.log 2>&1
done
timeout 330 build-gpu/tilegemm_gpu_tests --gtest_filter='*Fp8*:BenchKernelTimer*' --gtest_output=json:$W/gpu-tests.json > $W/gpu-tests.txt 2>&1
echo "rc=$?" >> $W/gpu-tests.txt
grep -E "PASSED|FAILED|SKIPPED|rc=" $W/gpu-tests.txt > $R/tests-summary.txt
tar czf $R/work.tgz -C $R work
