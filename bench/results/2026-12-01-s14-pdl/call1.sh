#!/usr/bin/env bash
# Session 14, device call 1 for programmatic dependent launch (PDL): build, the PDL GPU tests, a negative control
# (the same tests on kernels without the wait, which must fail), a broad GPU-test subset with DG_ENABLE_PDL=1, and
# PDL off/on for ours under the graph timer (back-to-back calls) and the events timer (L2 flush before each call).
# Run from the repository root with carry [".deps"].
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH TILEGEMM_COMMIT="$(cat .git-head 2>/dev/null || echo HEAD)+pdl"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
T=build-gpu/tilegemm_gpu_tests
count() { echo "ok $(grep -cE '^\[       OK \] .+ms\)$' $1), failed $(grep -cE '^\[  FAILED  \] .+ms\)$' $1), skipped $(grep -cE '^\[  SKIPPED \] .+ms\)$' $1)"; }
echo "## PDL tests" | tee $R/summary.md
timeout 120 $T --gtest_filter='Shapes/Pdl*:JitLaunch.*' > $W/pdl-tests.txt 2>&1; echo "pdl tests: $(count $W/pdl-tests.txt)" | tee -a $R/summary.md
# Negative control: kernels without pdl_prologue_done() (no wait, no early release); a fresh JIT cache.
rm -rf /tmp/nowait && mkdir -p /tmp/nowait && cp -r device /tmp/nowait/ && sed -i 's/^  prim::pdl_prologue_done();$//' /tmp/nowait/device/tilegemm/kernels/sm90_*_gemm.cuh
grep -c pdl_prologue_done /tmp/nowait/device/tilegemm/kernels/sm90_*_gemm.cuh | tee -a $R/summary.md
TILEGEMM_DEVICE_INCLUDE_DIR=/tmp/nowait/device DG_JIT_CACHE_DIR=/tmp/nowait/cache timeout 120 $T --gtest_filter='Shapes/Pdl*' > $W/negative-control.txt 2>&1
echo "negative control (no wait; failures expected): $(count $W/negative-control.txt)" | tee -a $R/summary.md
grep -E "calc_diff|diff" $W/negative-control.txt | head -5 >> $R/summary.md
# Broad subset with every GEMM launched with PDL.
DG_ENABLE_PDL=1 timeout 230 $T --gtest_filter='Shapes/Fp8Dense*:Shapes/Bf16*:Ragged/*:*Determinism*:Shapes/MGrouped*:Representative/*' > $W/pdl-on-subset.txt 2>&1
echo "subset with DG_ENABLE_PDL=1: $(count $W/pdl-on-subset.txt) (rc $?)" | tee -a $R/summary.md
grep -E '^\[  FAILED  \] .+ms\)$' $W/pdl-on-subset.txt | head | tee -a $R/summary.md
# Timing: PDL off/on, same binary, interleaved, two rounds.
for timer in graph events; do
  for dt in fp8 bf16; do
    shapes=("64 2112 7168" "128 7168 2048" "64 32768 512" "64 7168 16384" "4096 7168 2048")
    [[ $timer == events ]] && shapes=("64 2112 7168" "128 7168 2048" "4096 7168 2048")
    for s in "${shapes[@]}"; do
      set -- $s
      SWEEP_ROUNDS=2 SWEEP_OUT=$W/sweep-$timer-$dt-$1-$2-$3 timeout 60 scripts/config-sweep build-gpu/tilegemm --m $1 --n $2 --k $3 \
        --dtype $dt --timer $timer -- "DG_ENABLE_PDL=0" "DG_ENABLE_PDL=1" > /dev/null 2>&1
      tail -n +3 $W/sweep-$timer-$dt-$1-$2-$3/sweep.md | sed "s/^/| $timer | $dt /" >> $R/timing.md
    done
  done
done
sed -i '1i | timer | dtype | round | variant | shape | config | ours µs | cuBLAS µs | ratio | TFLOP/s |\n|---|---|---:|---|---|---|---:|---:|---:|---:|' $R/timing.md
cat $R/summary.md $R/timing.md
tar czf $R/work.tgz -C $R work && rm -rf $W
