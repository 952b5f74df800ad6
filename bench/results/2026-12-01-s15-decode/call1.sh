#!/usr/bin/env bash
# Session 15, device call 1: the decode suite (DeepSeek weights at M = 1, 8, 16, 32), BF16 and FP8, kernel timer,
# with the read of B, ours vs cuBLASLt in the same run.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
for dt in bf16 fp8; do
  timeout 200 build-gpu/tilegemm bench --suite decode --dtype $dt --timer kernel --read-b --json $R/decode-$dt-kernel.json --md $R/decode-$dt-kernel.md > $W/bench-$dt.txt 2>&1
  echo "bench $dt rc $?"
done
grep -E "^\| (1|8|16|32) \|" $R/decode-*-kernel.md | cut -c1-220
tar czf $R/work.tgz -C $R work && rm -rf $W
