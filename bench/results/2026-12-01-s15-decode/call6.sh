#!/usr/bin/env bash
# Session 15, device call 6: M just past 128 (a tail block after whole ones): the selector's pick against forced
# 64-, 128- and 256-row tiles, kernel timer, cuBLASLt in the same run. Data for the selector (not changed here).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
for s in "129 4096 7168 bf16" "129 7168 2048 bf16" "200 2112 7168 bf16" "129 2112 7168 fp8" "200 7168 2048 fp8" "200 4096 7168 fp8"; do
  set -- $s
  SWEEP_OUT=$W/sweep-$1-$2-$3-$4 timeout 60 scripts/config-sweep build-gpu/tilegemm --m $1 --n $2 --k $3 --dtype $4 \
    --timer kernel --rep-ms 100 -- "-" "block_m=64" "block_m=128,math_wg=1" "block_m=128,math_wg=2" "block_m=256" > /dev/null 2>&1
  tail -n +3 $W/sweep-$1-$2-$3-$4/sweep.md | sed "s/^/| $4 /" >> $R/table.md
done
sed -i '1i | dtype | round | variant | shape | config | ours µs | cuBLAS µs | ratio | TFLOP/s |\n|---|---:|---|---|---|---:|---:|---:|---:|' $R/table.md
cat $R/table.md
tar czf $R/work.tgz -C $R work && rm -rf $W
