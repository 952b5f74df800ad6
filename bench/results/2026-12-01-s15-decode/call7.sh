#!/usr/bin/env bash
# Session 15, device call 7: does B's last, partial n-block pay the same zero fill? N = 2112 (whole n-blocks) against
# N = 2056 (the last block holds 8 rows), forced tile widths, kernel timer.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
for dt in bf16 fp8; do
  for n in 2112 2056; do
    SWEEP_OUT=$W/sweep-$dt-$n timeout 40 scripts/config-sweep build-gpu/tilegemm --m 64 --n $n --k 7168 --dtype $dt \
      --timer kernel --rep-ms 100 -- "block_n=16" "block_n=64" > /dev/null 2>&1
    tail -n +3 $W/sweep-$dt-$n/sweep.md | sed "s/^/| $dt /" >> $R/table.md
  done
done
sed -i '1i | dtype | round | variant | shape | config | ours µs | cuBLAS µs | ratio | TFLOP/s |\n|---|---:|---|---|---|---:|---:|---:|---:|' $R/table.md
cat $R/table.md
tar czf $R/work.tgz -C $R work && rm -rf $W
