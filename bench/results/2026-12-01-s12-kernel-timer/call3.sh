#!/usr/bin/env bash
# Session 12 call 3: FP8 small M, is A's L2->SM traffic the bound? 1x2 clusters sharing A vs the selector (256-wide
# stages) vs one-block stages of the same tile; kernel timer, two rounds interleaved.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=c526d15 PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
for s in "64 2112 7168" "128 2112 7168" "64 4096 7168" "128 4096 7168" "64 7168 16384" "128 7168 16384"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$W/sweep-$1-$2-$3 timeout 150 scripts/config-sweep build-gpu/tilegemm --m $1 --n $2 --k $3 --dtype fp8 --timer kernel -- \
    "-" "block_k=128" "cluster_n=2" > $W/sweep-$1-$2-$3.log 2>&1
  cat $W/sweep-$1-$2-$3/sweep.md >> $R/call3-table.md
done
tar czf $R/work.tgz -C $R work
