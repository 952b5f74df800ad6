#!/usr/bin/env bash
# Session 14, device call 2 for PDL. Call 1's negative control passed when it should have failed: the fresh JIT
# cache made the host compile the GEMM after the late writer was launched, so the writer had finished before the
# GEMM started. The tests now run the GEMM once first. Here: the PDL tests, the negative control again (kernels
# without the wait: .exp/v-nowait), and where the next launch is released, under the graph timer (back-to-back
# calls): PDL off; released at the start (the tree: .exp is untracked, carried along); released by the producer
# after its last load (.exp/v-late); never released explicitly (.exp/v-none: the next kernel launches at exit).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH TILEGEMM_COMMIT="$(cat .git-head 2>/dev/null || echo HEAD)+pdl"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
T=build-gpu/tilegemm_gpu_tests
count() { echo "ok $(grep -cE '^\[       OK \] .+ms\)$' $1), failed $(grep -cE '^\[  FAILED  \] .+ms\)$' $1), skipped $(grep -cE '^\[  SKIPPED \] .+ms\)$' $1)"; }
echo "## PDL tests" | tee $R/summary.md
timeout 120 $T --gtest_filter='Shapes/Pdl*:JitLaunch.*' > $W/pdl-tests.txt 2>&1; echo "pdl tests: $(count $W/pdl-tests.txt)" | tee -a $R/summary.md
TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/v-nowait/device timeout 120 $T --gtest_filter='Shapes/Pdl*' > $W/negative-control.txt 2>&1
echo "negative control (kernels without the wait; failures expected): $(count $W/negative-control.txt)" | tee -a $R/summary.md
grep -E "calc_diff" $W/negative-control.txt | head -5 | tee -a $R/summary.md
for dt in fp8 bf16; do
  for s in "64 2112 7168" "128 7168 2048" "64 32768 512" "64 7168 16384" "4096 7168 2048"; do
    set -- $s
    SWEEP_ROUNDS=2 SWEEP_OUT=$W/sweep-$dt-$1-$2-$3 timeout 100 scripts/config-sweep build-gpu/tilegemm --m $1 --n $2 --k $3 \
      --dtype $dt --timer graph -- "DG_ENABLE_PDL=0" "DG_ENABLE_PDL=1" \
      "DG_ENABLE_PDL=1 TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/v-late/device" \
      "DG_ENABLE_PDL=1 TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/v-none/device" > /dev/null 2>&1
    tail -n +3 $W/sweep-$dt-$1-$2-$3/sweep.md | sed "s/^/| $dt /; s#$PWD/.exp/##" >> $R/timing.md
  done
done
sed -i '1i | dtype | round | variant | shape | config | ours µs | cuBLAS µs | ratio | TFLOP/s |\n|---|---:|---|---|---|---:|---:|---:|---:|' $R/timing.md
cat $R/summary.md $R/timing.md
tar czf $R/work.tgz -C $R work && rm -rf $W
