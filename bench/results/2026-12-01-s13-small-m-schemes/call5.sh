#!/usr/bin/env bash
# Session 13 call 5 (78c6418 + device-include variants; wrong results on purpose): the FP8 kernel's fixed cost.
# F1: the kernel returns at once (the launch alone); F2: returns after the descriptor prefetch, barrier init and sync;
# F3: the producer loads only B (plus B's block scales), no A, no wgmma, no store: a GEMM-shaped read of B.
# With the read of B (--read-b) under the same timer. Kernel timer, one round.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=78c6418 PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
B=build-gpu/tilegemm
for v in F1 F2 F3; do eval "v$v=\$(bench/probes/patched-device .exp/var$v.diff $W/v$v)" || exit 1; done
dirs=()
for s in "64 2112 512 block_n=16,block_k=512" "64 2112 7168 -" "64 4096 7168 -" "64 7168 2048 -" "64 7168 16384 -"; do
  set -- $s
  f=$4; [ $f = - ] && f=""
  SWEEP_OUT=$W/fp8-$1-$2-$3 timeout 90 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 --timer kernel --read-b \
    --warmup-ms 10 --rep-ms 100 -- "$4" "$f TILEGEMM_DEVICE_INCLUDE_DIR=$vF1" "$f TILEGEMM_DEVICE_INCLUDE_DIR=$vF2" \
    "$f TILEGEMM_DEVICE_INCLUDE_DIR=$vF3" > $W/fp8-$1-$2-$3.log 2>&1
  dirs+=($W/fp8-$1-$2-$3)
done
python3 bench/results/2026-12-01-s13-small-m-schemes/json-table.py "${dirs[@]}" > $R/call5-table.md
tar czf $R/work.tgz -C $R work
