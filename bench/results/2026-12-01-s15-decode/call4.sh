#!/usr/bin/env bash
# Session 15, device call 4: tail maps (the last, partial m-block of A / D through boxes of just its rows). GPU tests
# that reach them, then the decode suite, ragged M past one tile, and the DeepSeek suite (kernel timer, read of B,
# cuBLASLt in the same run).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm tilegemm_gpu_tests >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
T=build-gpu/tilegemm_gpu_tests
count() { echo "ok $(grep -cE '^\[       OK \] .+ms\)$' $1), failed $(grep -cE '^\[  FAILED  \] .+ms\)$' $1), skipped $(grep -cE '^\[  SKIPPED \] .+ms\)$' $1)"; }
timeout 230 $T --gtest_filter='Tails/*:Decode/*:*Masked*:Ragged/*:Representative/*:*Split*' > $R/tests.txt 2>&1
echo "tests rc $?: $(count $R/tests.txt)" | tee $R/summary.md
grep -E '^\[  FAILED  \]' $R/tests.txt | head -20 | tee -a $R/summary.md
for dt in bf16 fp8; do
  timeout 100 build-gpu/tilegemm bench --suite decode --dtype $dt --timer kernel --read-b --rep-ms 100 --json $W/decode-$dt.json --md $R/decode-$dt-kernel.md > $W/bench-decode-$dt.txt 2>&1
  echo "decode $dt rc $?" | tee -a $R/summary.md
done
echo "| dtype | M | N | K | config | ours µs | cuBLAS µs | read B µs |" > $R/ragged.md
echo "|---|---:|---:|---:|---|---:|---:|---:|" >> $R/ragged.md
for dt in bf16 fp8; do
  for nk in "2112 7168" "7168 2048" "4096 7168"; do
    set -- $nk
    for m in 64 65 96 100 128 129 200; do
      timeout 30 build-gpu/tilegemm bench --m $m --n $1 --k $2 --dtype $dt --timer kernel --read-b --rep-ms 100 --json $W/r-$dt-$m-$1-$2.json > /dev/null 2>&1
      python3 - $W/r-$dt-$m-$1-$2.json $dt >> $R/ragged.md <<'PY'
import json,sys
r=json.load(open(sys.argv[1]))["rows"][0]
g=lambda k:(f"{r[k]['median_us']:.1f}" if r.get(k) and r[k].get('median_us') else "-")
print(f"| {sys.argv[2]} | {r['m']} | {r['n']} | {r['k']} | `{r.get('config','')}` | {g('ours')} | {g('cublas')} | {g('b_read')} |")
PY
    done
  done
done
cat $R/summary.md $R/ragged.md
grep -h "Geometric" $R/decode-*-kernel.md
tar czf $R/work.tgz -C $R work && rm -rf $W
