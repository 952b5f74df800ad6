#!/usr/bin/env bash
# Session 13 call 1 (78c6418): (a) the FP8 DeepSeek suite at the final device code, both timers, with the read of B;
# (b) split-K / stream-K against the selector's data-parallel pick on the six K >= 7168 small-M shapes, FP8 with
# stages of two/four K blocks and BF16 with two-atom stages, kernel timer, one round (kernel times repeat to 0.1 µs).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export TILEGEMM_COMMIT=78c6418 PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
B=build-gpu/tilegemm
timeout 120 $B bench --suite deepseek --dtype fp8 --timer kernel --read-b --json $R/fp8-kernel.json --md $R/fp8-kernel.md > $W/fp8-kernel.log 2>&1
timeout 120 $B bench --suite deepseek --dtype fp8 --read-b --json $R/fp8-events.json --md $R/fp8-events.md > $W/fp8-events.log 2>&1
fp8_variants=("-" "TILEGEMM_GEMM_SCHEME=split-k:2 block_n=32,block_k=512" "TILEGEMM_GEMM_SCHEME=split-k:4 block_n=64,block_k=512"
  "TILEGEMM_GEMM_SCHEME=split-k block_n=128,block_k=256" "TILEGEMM_GEMM_SCHEME=stream-k block_n=32,block_k=512"
  "TILEGEMM_GEMM_SCHEME=stream-k block_n=64,block_k=512")
bf16_variants=("-" "TILEGEMM_GEMM_SCHEME=split-k:2 block_n=32,block_k=128" "TILEGEMM_GEMM_SCHEME=split-k:4 block_n=64,block_k=128"
  "TILEGEMM_GEMM_SCHEME=split-k block_n=128,block_k=128" "TILEGEMM_GEMM_SCHEME=stream-k block_n=32,block_k=128"
  "TILEGEMM_GEMM_SCHEME=stream-k block_n=64,block_k=128")
for dt in fp8 bf16; do
  for s in "64 2112 7168" "128 2112 7168" "64 4096 7168" "128 4096 7168" "64 7168 16384" "128 7168 16384"; do
    set -- $s
    if [ $dt = fp8 ]; then v=("${fp8_variants[@]}"); else v=("${bf16_variants[@]}"); fi
    SWEEP_OUT=$W/sweep-$dt-$1-$2-$3 timeout 60 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype $dt --timer kernel \
      --warmup-ms 10 --rep-ms 100 -- "${v[@]}" > $W/sweep-$dt-$1-$2-$3.log 2>&1
    cat $W/sweep-$dt-$1-$2-$3/sweep.md >> $R/schemes-table.md
  done
done
tar czf $R/work.tgz -C $R work
