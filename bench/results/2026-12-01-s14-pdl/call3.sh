#!/usr/bin/env bash
# Session 14, device call 3 for PDL, on the tree as committed: the kernels wait after their prologue and release no
# dependents early (call 2). The PDL tests, the negative control (.exp/v-nowait: kernels without the wait), a GPU
# test subset with every GEMM launched with PDL, and PDL off/on under the graph timer (back-to-back calls, two
# rounds) and the events timer (L2 flush before each call).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH TILEGEMM_COMMIT="$(cat .git-head 2>/dev/null || echo HEAD)"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
T=build-gpu/tilegemm_gpu_tests
count() { echo "ok $(grep -cE '^\[       OK \] .+ms\)$' $1), failed $(grep -cE '^\[  FAILED  \] .+ms\)$' $1), skipped $(grep -cE '^\[  SKIPPED \] .+ms\)$' $1)"; }
echo "## PDL tests at $(cat .git-head 2>/dev/null)" | tee $R/summary.md
timeout 120 $T --gtest_filter='Shapes/Pdl*:JitLaunch.*' > $W/pdl-tests.txt 2>&1; echo "pdl tests: $(count $W/pdl-tests.txt)" | tee -a $R/summary.md
grep -E "late writer" $W/pdl-tests.txt | tee -a $R/summary.md
TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/v-nowait/device timeout 120 $T --gtest_filter='Shapes/Pdl*' > $W/negative-control.txt 2>&1
echo "negative control (kernels without the wait; failures expected): $(count $W/negative-control.txt)" | tee -a $R/summary.md
DG_ENABLE_PDL=1 timeout 150 $T --gtest_filter='Shapes/Fp8Dense*:Shapes/Bf16*:Ragged/*:*Determinism*:Representative/*' > $W/pdl-on-subset.txt 2>&1
echo "subset with DG_ENABLE_PDL=1 (rc $?): $(count $W/pdl-on-subset.txt)" | tee -a $R/summary.md
grep -E '^\[  FAILED  \] .+ms\)$' $W/pdl-on-subset.txt | head | tee -a $R/summary.md
for timer in graph events; do
  for dt in fp8 bf16; do
    shapes=("64 2112 7168" "128 7168 2048" "64 32768 512" "64 7168 16384" "4096 7168 2048")
    rounds=2; [[ $timer == events ]] && rounds=1 && shapes=("64 2112 7168" "128 7168 2048" "4096 7168 2048")
    for s in "${shapes[@]}"; do
      set -- $s
      SWEEP_ROUNDS=$rounds SWEEP_OUT=$W/sweep-$timer-$dt-$1-$2-$3 timeout 60 scripts/config-sweep build-gpu/tilegemm --m $1 --n $2 --k $3 \
        --dtype $dt --timer $timer -- "DG_ENABLE_PDL=0" "DG_ENABLE_PDL=1" > /dev/null 2>&1
      tail -n +3 $W/sweep-$timer-$dt-$1-$2-$3/sweep.md | sed "s/^/| $timer | $dt /" >> $R/timing.md
    done
  done
done
sed -i '1i | timer | dtype | round | variant | shape | config | ours µs | cuBLAS µs | ratio | TFLOP/s |\n|---|---|---:|---|---|---|---:|---:|---:|---:|' $R/timing.md
cat $R/summary.md $R/timing.md
tar czf $R/work.tgz -C $R work && rm -rf $W
