#!/usr/bin/env bash
# Session 13 call 2 (78c6418 + ablate.diff as device-include variants; results wrong on purpose, only time counts):
# where the FP8 small-M data-parallel kernel's time goes. TG_ABLATE 1: A loaded only in the first ring pass (later
# stages reuse stale A), 2: the same for B, 3: every load, no wgmma, 4: neither loads after the first pass nor wgmma.
# Then the fixed cost: the same tiles on K = 512 (one stage per tile), with the read of B. Kernel timer, one round.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=78c6418 PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
B=build-gpu/tilegemm
for v in 1 2 3 4; do eval "v$v=\$(bench/probes/patched-device .exp/ablate$v.diff $W/v$v)" || exit 1; done
for s in "64 2112 7168 block_n=16" "128 2112 7168 block_n=32" "64 4096 7168 block_n=32" "64 7168 16384 block_n=64"; do
  set -- $s
  SWEEP_OUT=$W/abl-$1-$2-$3 timeout 60 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 --timer kernel -- \
    "-" "TILEGEMM_DEVICE_INCLUDE_DIR=$v1" "TILEGEMM_DEVICE_INCLUDE_DIR=$v2" "TILEGEMM_DEVICE_INCLUDE_DIR=$v3" \
    "TILEGEMM_DEVICE_INCLUDE_DIR=$v4" > $W/abl-$1-$2-$3.log 2>&1
  cat $W/abl-$1-$2-$3/sweep.md >> $R/ablation-table.md
  bk=$([ $3 = 16384 ] && echo 256 || echo 512)
  SWEEP_OUT=$W/k1-$1-$2 timeout 60 scripts/config-sweep $B --m $1 --n $2 --k $bk --dtype fp8 --timer kernel --read-b -- \
    "block_m=64,$4,block_k=$bk" > $W/k1-$1-$2.log 2>&1
  cat $W/k1-$1-$2/sweep.md >> $R/one-stage-table.md
  python3 -c "import json,sys; r=json.load(open('$W/k1-$1-$2/1.json'))['rows'][0]; print('$1x$2x$bk read B', r['b_read']['median_us'])" >> $R/one-stage-table.md
done
tar czf $R/work.tgz -C $R work
