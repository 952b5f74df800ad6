#!/usr/bin/env bash
# Session 15, device call 2: A's boxes cut to M rows when M < BLOCK_M. GPU tests that reach the change (decode, masked
# with small M_max, ragged, split/stream-K at M = 1, representative), then the decode suite again (kernel timer,
# read of B, cuBLASLt in the same run).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
T=build-gpu/tilegemm_gpu_tests
count() { echo "ok $(grep -cE '^\[       OK \] .+ms\)$' $1), failed $(grep -cE '^\[  FAILED  \] .+ms\)$' $1), skipped $(grep -cE '^\[  SKIPPED \] .+ms\)$' $1)"; }
timeout 240 $T --gtest_filter='Decode/*:*Masked*:Ragged/*:Representative/*' > $R/tests.txt 2>&1
echo "tests rc $?: $(count $R/tests.txt)" | tee $R/summary.md
grep -E '^\[  FAILED  \]' $R/tests.txt | head -20 | tee -a $R/summary.md
for dt in bf16 fp8; do
  timeout 150 build-gpu/tilegemm bench --suite decode --dtype $dt --timer kernel --read-b --json $R/decode-$dt-kernel.json --md $R/decode-$dt-kernel.md > $W/bench-$dt.txt 2>&1
  echo "bench $dt rc $?" | tee -a $R/summary.md
done
grep -E "^\| (1|8|16|32) \|" $R/decode-*-kernel.md | cut -d'|' -f2-4,7,11,13,17,18,19 | sed 's/^.*decode-//'
grep -h "Geometric" $R/decode-*-kernel.md
tar czf $R/work.tgz -C $R work && rm -rf $W
