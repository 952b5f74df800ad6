#!/usr/bin/env bash
# Device call 1 of session 7: wgmma probe + producer/consumer ablation variants on BF16 64x2112x7168.
set -u
R=$OUT/r; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/smi.txt
.exp/wgmma_issue_rate > $R/probe.txt 2>&1
cmake -S . -B /tmp/tg-build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $R/build.log 2>&1
cmake --build /tmp/tg-build -j16 --target tilegemm >> $R/build.log 2>&1 || { tar czf $OUT/r.tgz -C $OUT r; exit 1; }
B=/tmp/tg-build/tilegemm
export TILEGEMM_COMMIT=df27317+var
run() { # name variant scheme filter timer flush
  local name=$1 v=$2 scheme=$3 filter=$4 timer=$5 flush=$6
  TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/var/$v/device TILEGEMM_GEMM_SCHEME=$scheme TILEGEMM_CONFIG_FILTER=$filter \
    timeout 60 $B bench --m 64 --n 2112 --k 7168 --warmup-ms 5 --rep-ms 40 --timer $timer --flush $flush --json $R/$name.json > $R/$name.log 2>&1
  python3 - $R/$name.json "$name" >> $R/table.md <<'PY'
import json,sys
try:
  r=json.load(open(sys.argv[1]))["rows"][0]
  print(f"| {sys.argv[2]} | {r.get('config','')} | {r['ours']['median_us']:.2f} | {r['cublas']['median_us']:.2f} | {r.get('error','')[:60]} |")
except Exception as e: print(f"| {sys.argv[2]} | fail {e} | | | |")
PY
}
echo "| run | config | ours µs | cuBLAS µs | error |" > $R/table.md
echo "|---|---|---:|---:|---|" >> $R/table.md
for timer in cuda-graph cuda-events; do
  fl=read; t=${timer#cuda-}
  for v in base nomma notma none aonly bonly; do
    run dp16-$v-$t $v data-parallel block_n=16,stages=16 $timer $fl
    run dp64-$v-$t $v data-parallel block_n=64 $timer $fl
  done
  for v in base nofix nomma notma; do
    run sk4-64-$v-$t $v split-k:4 block_n=64 $timer $fl
    run sk12-192-$v-$t $v split-k:12 block_n=192 $timer $fl
  done
  DG_DETERMINISTIC=1 run sk4-64-det-$t base split-k:4 block_n=64 $timer $fl
  DG_DETERMINISTIC=1 run sk12-192-det-$t base split-k:12 block_n=192 $timer $fl
done
cat $R/table.md
tar czf $OUT/r.tgz -C $OUT r
