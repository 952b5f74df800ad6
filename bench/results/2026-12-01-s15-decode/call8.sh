#!/usr/bin/env bash
# Session 15, device call 8: the deep_gemm package on the GPU at the tail-map tree, the cases with ragged or tiny M
# (1, 3, 129, 257: tail maps) for BF16 and FP8.
set -u
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $OUT/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm_core >> $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
GPU_SUITE_STEPS=python GPU_SUITE_PYTEST_ARGS="-q -k '1-4096-7168 or 129-264 or 3-80 or 257-136 or 8-4096-7168'" timeout 150 scripts/gpu-suite > $OUT/python.txt 2>&1
echo "rc $?"; grep -E "passed|failed|error" $OUT/python.txt | tail -5; ls $OUT
