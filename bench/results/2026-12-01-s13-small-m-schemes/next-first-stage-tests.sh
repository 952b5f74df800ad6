#!/usr/bin/env bash
# Prepared in session 13, NOT RUN (the device budget was spent). First of two device calls for
# first-stage-cp-async.diff: build with the patch and run the BF16 and FP8 GPU tests it touches (~90 s build,
# ~400 s tests). Run from the repository root with carry [".deps"].
#
# The patch copies each CTA's first stage with cp.async from the producer warpgroup's warps 2-3 instead of TMA
# (FP8 1D2D without clusters, K-split pairs or two-pass tiles; BF16 with K-major A and B, no B multicast, not
# K-grouped), after call 7's probe: a first DRAM round trip takes ~1120 ns through TMA and ~736 ns through
# cp.async. It compiles without spills for every DeepSeek, grouped and masked config of both dtypes and every BF16
# layout (DG_JIT_PTXAS_CHECK=1), and all 805 ctest cases pass with it applied (GPU ones skip there).
set -u
R=$OUT; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH TILEGEMM_COMMIT="$(cat .git-head 2>/dev/null || echo HEAD)+first-stage-cp-async"
patch -p1 -s < bench/results/2026-12-01-s13-small-m-schemes/first-stage-cp-async.diff || exit 1
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $R/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm_gpu_tests >> $R/build.txt 2>&1 || { tail -30 $R/build.txt; exit 1; }
timeout 470 build-gpu/tilegemm_gpu_tests --gtest_filter='*Fp8*:*Bf16*:Ragged/SplitK*:Ragged/StreamK*:*Determinism*:Shapes/MGrouped*:Representative/*' \
  > $R/tests.txt 2>&1
echo "ok $(grep -cE '^\[       OK \] .+ \([0-9]+ ms\)$' $R/tests.txt), failed $(grep -cE '^\[  FAILED  \] .+ \([0-9]+ ms\)$' $R/tests.txt)"
grep -E '^\[  FAILED  \] .+ms\)$' $R/tests.txt | head
