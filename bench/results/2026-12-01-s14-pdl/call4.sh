#!/usr/bin/env bash
# Session 14, device call 4 (the last ~4 device minutes): the core library alone, then the deep_gemm Python tests
# whose names match "pdl or graph or config" (the PDL chain, eager and in a CUDA graph; the masked CUDA-graph test;
# the config setters).
set -u
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps \
  -DTILEGEMM_BUILD_TESTS=OFF > $OUT/build.txt 2>&1 && cmake --build build-gpu -j16 --target tilegemm_core >> $OUT/build.txt 2>&1 || { tail -20 $OUT/build.txt; exit 1; }
GPU_SUITE_STEPS=python GPU_SUITE_PYTEST_ARGS="-q -k 'pdl or graph or config'" GPU_SUITE_TIMEOUT_PYTHON=150 scripts/gpu-suite > $OUT/suite-stdout.txt 2>&1
tail -15 $OUT/suite-stdout.txt; grep -E "passed|failed|PASSED|FAILED|Error" $OUT/suite.log | tail -15
