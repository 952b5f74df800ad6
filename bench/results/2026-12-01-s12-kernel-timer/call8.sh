#!/usr/bin/env bash
# Session 12 call 8 (99ef316 + overlap-stage-blocks.diff as a device-include variant): FP8 stages of several K
# blocks issuing every block's wgmmas at once and promoting each as it lands. Forced multi-block GPU cases on the
# variant, then an A/B on the small-M shapes that take 256/512-wide stages (kernel timer, two rounds).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=99ef316 PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
v=$(bench/probes/patched-device .exp/overlap-stage-blocks.diff $W/overlap) || exit 1
TILEGEMM_DEVICE_INCLUDE_DIR=$v timeout 100 build-gpu/tilegemm_gpu_tests --gtest_filter='FourBlockStages*:TwoBlockStages*:*Fp8MGroupedMasked*' > $R/tests.txt 2>&1
for s in "64 2112 7168" "128 2112 7168" "64 4096 7168" "64 7168 16384"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$W/sweep-$1-$2-$3 timeout 40 scripts/config-sweep build-gpu/tilegemm --m $1 --n $2 --k $3 --dtype fp8 --timer kernel -- \
    "-" "TILEGEMM_DEVICE_INCLUDE_DIR=$v" > $W/sweep-$1-$2-$3.log 2>&1
  cat $W/sweep-$1-$2-$3/sweep.md >> $R/call8-table.md
done
tar czf $R/work.tgz -C $R work
