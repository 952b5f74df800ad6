#!/usr/bin/env bash
# Session 12 call 7 (f039c14): BF16 four-atom stages (block_k = 256): forced GPU cases, then an A/B against the
# selector's pick on the small-M long-K DeepSeek shapes (kernel timer, two rounds).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=f039c14 PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
timeout 120 build-gpu/tilegemm_gpu_tests --gtest_filter='*Bf16GemmFourAtomStages*:*Bf16GemmTwoAtomStages*' > $R/tests.txt 2>&1
for s in "64 2112 7168" "128 2112 7168" "64 4096 7168" "128 4096 7168" "64 7168 16384" "128 7168 16384"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$W/sweep-$1-$2-$3 timeout 60 scripts/config-sweep build-gpu/tilegemm --m $1 --n $2 --k $3 --dtype bf16 --timer kernel --     "-" "block_k=256" > $W/sweep-$1-$2-$3.log 2>&1
  cat $W/sweep-$1-$2-$3/sweep.md >> $R/call7-table.md
done
tar czf $R/work.tgz -C $R work
