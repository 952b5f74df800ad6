#!/usr/bin/env bash
# Device call 2: BF16 two-atom stages (bk128 variant) vs base on small-M shapes; k1 calibration.
set -u
R=$OUT/r; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B /tmp/tg-build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $R/build.log 2>&1
cmake --build /tmp/tg-build -j16 --target tilegemm >> $R/build.log 2>&1 || { tar czf $OUT/r.tgz -C $OUT r; exit 1; }
B=/tmp/tg-build/tilegemm
export TILEGEMM_COMMIT=df27317+var
run() { # name variant scheme filter timer flush m n k
  local name=$1 v=$2 scheme=$3 filter=$4 timer=$5 flush=$6 m=$7 n=$8 k=$9
  TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/var/$v/device TILEGEMM_GEMM_SCHEME=$scheme TILEGEMM_CONFIG_FILTER=$filter \
    timeout 60 $B bench --m $m --n $n --k $k --warmup-ms 5 --rep-ms 40 --timer $timer --flush $flush --json $R/$name.json > $R/$name.log 2>&1
  python3 - $R/$name.json "$name" >> $R/table.md <<'PY'
import json,sys
try:
  r=json.load(open(sys.argv[1]))["rows"][0]
  print(f"| {sys.argv[2]} | {r.get('config','')} | {r['ours']['median_us']:.2f} | {r['cublas']['median_us']:.2f} | {r['cublas']['median_us']/r['ours']['median_us']:.3f} | {r.get('error','')[:50]} |")
except Exception as e: print(f"| {sys.argv[2]} | fail {e} | | | | |")
PY
}
echo "| run | config | ours µs | cuBLAS µs | ratio | error |" > $R/table.md
echo "|---|---|---:|---:|---:|---|" >> $R/table.md
for timer in cuda-graph cuda-events; do
  t=${timer#cuda-}
  for v in k1; do run dp16-$v-$t $v data-parallel block_n=16,stages=16 $timer read 64 2112 7168; done
  for shape in "64 2112 7168" "128 2112 7168" "64 4096 7168" "64 7168 16384" "128 7168 16384" "64 7168 2048" "64 24576 1536"; do
    set -- $shape; sn=${1}x${2}x${3}
    for v in base bk128; do
      run $sn-dp-$v-$t $v data-parallel "" $timer read $1 $2 $3
    done
  done
  for v in base bk128; do
    run 64x2112x7168-dp16s16-$v-$t $v data-parallel block_n=16,stages=16 $timer read 64 2112 7168
    run 64x2112x7168-dp32-$v-$t $v data-parallel block_n=32 $timer read 64 2112 7168
    run 64x2112x7168-dp64-$v-$t $v data-parallel block_n=64 $timer read 64 2112 7168
    run 64x2112x7168-sk4-64-$v-$t $v split-k:4 block_n=64 $timer read 64 2112 7168
    run 64x2112x7168-sk2-32-$v-$t $v split-k:2 block_n=32 $timer read 64 2112 7168
  done
done
cat $R/table.md
tar czf $OUT/r.tgz -C $OUT r
