#!/usr/bin/env bash
# Session 12 call 4: FP8 small M, L2 prefetch bursts of B (cp.async.bulk.prefetch.tensor) ahead of the TMA loads,
# so that neighbouring pieces of each B row reach HBM together; variants (chunk stages, stages ahead).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=c526d15 PATH=/usr/local/cuda/bin:$PATH
if [[ ! -x build-gpu/tilegemm ]]; then
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
  cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
fi
variants=("-")
for cv in "4 4" "8 8" "8 16" "64 1"; do
  set -- $cv
  d=$(bench/probes/patched-device .exp/b-prefetch.diff $W/pf-$1-$2) || exit 1
  sed -i "s/#define TG_EXP_PF_CHUNK 8/#define TG_EXP_PF_CHUNK $1/; s/#define TG_EXP_PF_AHEAD 16/#define TG_EXP_PF_AHEAD $2/" $d/tilegemm/kernels/sm90_fp8_gemm.cuh
  grep -c "TG_EXP_PF_CHUNK $1" $d/tilegemm/kernels/sm90_fp8_gemm.cuh >> $W/variants.txt
  variants+=("TILEGEMM_DEVICE_INCLUDE_DIR=$d")
done
for s in "64 2112 7168" "128 2112 7168" "64 4096 7168" "64 7168 16384" "128 7168 16384" "64 7168 2048"; do
  set -- $s
  SWEEP_ROUNDS=2 SWEEP_OUT=$W/sweep-$1-$2-$3 timeout 150 scripts/config-sweep build-gpu/tilegemm --m $1 --n $2 --k $3 --dtype fp8 --timer kernel -- \
    "${variants[@]}" > $W/sweep-$1-$2-$3.log 2>&1
  cat $W/sweep-$1-$2-$3/sweep.md >> $R/call4-table.md
done
tar czf $R/work.tgz -C $R work
