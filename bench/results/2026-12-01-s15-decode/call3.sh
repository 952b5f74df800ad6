#!/usr/bin/env bash
# Session 15, device call 3 (tree fa3969a): the DeepSeek suite at the new tree (M >= 64 unchanged but for the runtime
# transaction bytes), and ragged M past one tile (the last m-block mostly past M), kernel timer, cuBLASLt same run.
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $W/build.txt 2>&1
cmake --build build-gpu -j16 --target tilegemm >> $W/build.txt 2>&1 || { tail -30 $W/build.txt; exit 1; }
for dt in bf16 fp8; do
  timeout 200 build-gpu/tilegemm bench --suite deepseek --dtype $dt --timer kernel --read-b --json $R/deepseek-$dt-kernel.json --md $R/deepseek-$dt-kernel.md > $W/bench-$dt.txt 2>&1
  echo "deepseek $dt rc $?"
done
echo "| dtype | M | N | K | config | ours µs | cuBLAS µs | read B µs |" > $R/ragged.md
echo "|---|---:|---:|---:|---|---:|---:|---:|" >> $R/ragged.md
for dt in bf16 fp8; do
  for nk in "2112 7168" "7168 2048"; do
    set -- $nk
    for m in 64 65 96 128 129 200; do
      timeout 30 build-gpu/tilegemm bench --m $m --n $1 --k $2 --dtype $dt --timer kernel --read-b --rep-ms 100 --json $W/r-$dt-$m-$1-$2.json > /dev/null 2>&1
      python3 - $W/r-$dt-$m-$1-$2.json $dt >> $R/ragged.md <<'PY'
import json,sys
r=json.load(open(sys.argv[1]))["rows"][0]
g=lambda k:(r.get(k) or {}).get("median_us","-")
print(f"| {sys.argv[2]} | {r['m']} | {r['n']} | {r['k']} | `{r.get('config','')}` | {g('ours')} | {g('cublas')} | {g('b_read')} |")
PY
    done
  done
done
cat $R/ragged.md
grep -h "Geometric" $R/deepseek-*-kernel.md
tar czf $R/work.tgz -C $R work && rm -rf $W
