#!/usr/bin/env bash
# Session 12 call 2: the kernel timer after enabling API records; then the DeepSeek suites under it.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=c526d15 PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
build-gpu/tilegemm_gpu_tests --gtest_filter='BenchKernelTimer*:BenchFlushGpu*' > $R/tests.txt 2>&1
grep -q "FAILED TEST" $R/tests.txt && { tar czf $R/work.tgz -C $R work; exit 0; }
for dt in fp8 bf16; do
  timeout 200 build-gpu/tilegemm bench --suite deepseek --dtype $dt --timer kernel --read-b --json $W/$dt-kernel.json --md $R/$dt-kernel.md > $W/$dt-kernel.log 2>&1
done
tar czf $R/work.tgz -C $R work
