#!/usr/bin/env bash
# Prepared in session 13, NOT RUN (the device budget was spent): the first device call for ldgsts-first-stage.diff.
# The patch loads each CTA's first stage with cp.async from the producer warpgroup's warps 2-3 instead of TMA (FP8
# 1D2D without clusters, K-split pairs or two-pass tiles), after call 7's probe: a first DRAM round trip takes
# ~1120 ns through TMA and ~736 ns through cp.async. It compiles for every DeepSeek, grouped and masked FP8 config
# without spills (DG_JIT_PTXAS_CHECK=1) and all 805 ctest cases pass with it (GPU ones skip there); it has never
# run on a GPU.
# Run from the repository root with carry [".deps"]; ~90 s build + ~260 s FP8 GPU tests + ~60 s A/B.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p $W/base && cp -r device $W/base/   # the unpatched device code, for the A/B (the params only grow at the end)
patch -p1 -s < bench/results/2026-12-01-s13-small-m-schemes/ldgsts-first-stage.diff || exit 1
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
timeout 300 build-gpu/tilegemm_gpu_tests --gtest_filter='*Fp8*:Ragged/SplitK*:Fp8SplitDeterminism*' > $R/tests.txt 2>&1
grep -cE '^\[       OK \]' $R/tests.txt; grep -E '^\[  FAILED  \].*ms\)$' $R/tests.txt | head
for s in "64 2112 7168" "128 2112 7168" "64 4096 7168" "128 4096 7168" "64 7168 2048" "128 7168 2048" "64 32768 512" \
         "128 32768 512" "4096 2112 7168"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$W/ab-$1-$2-$3 timeout 60 scripts/config-sweep build-gpu/tilegemm --m $1 --n $2 --k $3 --dtype fp8 \
    --timer kernel --warmup-ms 10 --rep-ms 100 -- "TILEGEMM_DEVICE_INCLUDE_DIR=$W/base/device" "-" > $W/ab-$1-$2-$3.log 2>&1
  cat $W/ab-$1-$2-$3/sweep.md >> $R/ab-table.md
done
tar czf $R/work.tgz -C $R work
