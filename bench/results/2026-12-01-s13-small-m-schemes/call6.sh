#!/usr/bin/env bash
# Session 13 call 6 (78c6418 + device-include variants; wrong results on purpose): the FP8 kernel's fixed cost.
# Is the first TMA load slowed by fetching its tensor map? On top of F3 (the GEMM-shaped read of B):
# H1: thread 0 prefetches B's tensor map, spins 1.5 µs, then goes on; H2: spins 1.5 µs first, then prefetches (control).
# If the map's fetch is on the critical path, H1 comes out faster than H2 by about that fetch's latency.
# With the read of B (--read-b) under the same timer. Kernel timer, one round.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=78c6418 PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
B=build-gpu/tilegemm
for v in F3 H1 H2; do eval "v$v=\$(bench/probes/patched-device .exp/var$v.diff $W/v$v)" || exit 1; done
dirs=()
for s in "64 2112 512 block_n=16,block_k=512" "64 2112 7168 -"; do
  set -- $s
  f=$4; [ $f = - ] && f=""
  SWEEP_OUT=$W/fp8-$1-$2-$3 timeout 90 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 --timer kernel --read-b \
    --warmup-ms 10 --rep-ms 100 -- "$4" "$f TILEGEMM_DEVICE_INCLUDE_DIR=$vF3" "$f TILEGEMM_DEVICE_INCLUDE_DIR=$vH1" \
    "$f TILEGEMM_DEVICE_INCLUDE_DIR=$vH2" > $W/fp8-$1-$2-$3.log 2>&1
  dirs+=($W/fp8-$1-$2-$3)
done
python3 bench/results/2026-12-01-s13-small-m-schemes/json-table.py "${dirs[@]}" > $R/call6-table.md
tar czf $R/work.tgz -C $R work
