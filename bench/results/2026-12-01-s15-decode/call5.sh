#!/usr/bin/env bash
# Session 15, device call 5 (tree with the tail maps): every GPU test call 4 did not run, then the DeepSeek suite
# (M >= 64: no tails) against cuBLASLt, kernel timer.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
T=build-gpu/tilegemm_gpu_tests
count() { echo "ok $(grep -cE '^\[       OK \] .+ms\)$' $1), failed $(grep -cE '^\[  FAILED  \] .+ms\)$' $1), skipped $(grep -cE '^\[  SKIPPED \] .+ms\)$' $1)"; }
timeout 330 $T --gtest_filter='-Tails/*:Decode/*:*Masked*:Ragged/*:Representative/*:*Split*' > $R/tests-rest.txt 2>&1
echo "tests rc $?: $(count $R/tests-rest.txt)" | tee $R/summary.md
grep -E '^\[  FAILED  \]' $R/tests-rest.txt | head -20 | tee -a $R/summary.md
tail -3 $R/tests-rest.txt | tee -a $R/summary.md
for dt in bf16 fp8; do
  timeout 80 build-gpu/tilegemm bench --suite deepseek --dtype $dt --timer kernel --rep-ms 100 --json $R/deepseek-$dt-kernel.json --md $R/deepseek-$dt-kernel.md > $W/bench-$dt.txt 2>&1
  echo "deepseek $dt rc $?" | tee -a $R/summary.md
done
grep -h "Geometric" $R/deepseek-*-kernel.md
tar czf $R/work.tgz -C $R work && rm -rf $W
