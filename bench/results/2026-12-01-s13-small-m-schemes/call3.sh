#!/usr/bin/env bash
# Session 13 call 3 (78c6418 + device-include variants): the FP8 kernel's fixed cost. R: the last store wait waits
# for the store's shared-memory reads only (cp.async.bulk.wait_group.read, as CUTLASS/DeepGEMM end), FP8 and BF16;
# E: no epilogue at all (wrong results on purpose); S: the producer warp signals the barrier-init sync
# (bar.arrive) and starts loading without waiting for the other warps. Kernel timer, two rounds interleaved.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=78c6418 PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
B=build-gpu/tilegemm
for v in R E S; do eval "v$v=\$(bench/probes/patched-device .exp/var$v.diff $W/v$v)" || exit 1; done
dirs=()
for s in "64 2112 512 block_n=16,block_k=512" "64 2112 7168 -" "128 2112 7168 -" "64 4096 7168 -" "64 7168 2048 -" \
         "128 7168 2048 -" "64 32768 512 -" "128 32768 512 -"; do
  set -- $s
  f=$4; [ $f = - ] && f=""
  SWEEP_ROUNDS=2 SWEEP_OUT=$W/fp8-$1-$2-$3 timeout 90 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 --timer kernel \
    --warmup-ms 10 --rep-ms 100 -- "$4" "$f TILEGEMM_DEVICE_INCLUDE_DIR=$vR" "$f TILEGEMM_DEVICE_INCLUDE_DIR=$vE" \
    "$f TILEGEMM_DEVICE_INCLUDE_DIR=$vS" > $W/fp8-$1-$2-$3.log 2>&1
  dirs+=($W/fp8-$1-$2-$3)
done
for s in "64 2112 7168" "128 7168 2048" "64 32768 512"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$W/bf16-$1-$2-$3 timeout 60 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype bf16 --timer kernel \
    --warmup-ms 10 --rep-ms 100 -- "-" "TILEGEMM_DEVICE_INCLUDE_DIR=$vR" > $W/bf16-$1-$2-$3.log 2>&1
  dirs+=($W/bf16-$1-$2-$3)
done
python3 bench/results/2026-12-01-s13-small-m-schemes/json-table.py "${dirs[@]}" > $R/call3-table.md
tar czf $R/work.tgz -C $R work
