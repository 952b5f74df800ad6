#!/usr/bin/env bash
# Device call 6: BF16 four-atom stages (block_k=256) vs the selector's two-atom pick, interleaved, zero flush.
set -u
R=$OUT/r; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH TILEGEMM_COMMIT=${TILEGEMM_COMMIT:-wip}
cmake -S . -B /tmp/tg-build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps > $R/build.log 2>&1
cmake --build /tmp/tg-build -j16 --target tilegemm >> $R/build.log 2>&1 || { tar czf $OUT/r.tgz -C $OUT r; exit 1; }
B=/tmp/tg-build/tilegemm
echo "| shape | variant | flush | rep | config | ours µs | cuBLAS µs | diff |" > $R/table.md
echo "|---|---|---|---:|---|---:|---:|---|" >> $R/table.md
one() {
  local m=$1 n=$2 k=$3 v=$4 f=$5 fl=$6 rep=$7 j=$R/$1x$2x$3-$4-$6-$7.json
  TILEGEMM_CONFIG_FILTER=$f timeout 60 $B bench --m $m --n $n --k $k --flush $fl --warmup-ms 10 --rep-ms 100 --json $j > $R/$1x$2x$3-$4-$6-$7.log 2>&1
  python3 - $j "${m}x${n}x${k}" $v $fl $rep >> $R/table.md <<'PY'
import json,sys
try:
  r=json.load(open(sys.argv[1]))["rows"][0]
  print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {r.get('config','')} | {r['ours']['median_us']:.2f} | {r['cublas']['median_us']:.2f} | {r.get('calc_diff',-1):.1e} {r.get('error','')[:40]} |")
except Exception as e: print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | fail {e} | | | |")
PY
}
for shape in "64 2112 7168" "128 2112 7168" "64 4096 7168" "64 7168 16384"; do
  set -- $shape
  for fl in zero read; do
    for rep in 1 2; do
      one $1 $2 $3 k128 "block_k=128" $fl $rep
      one $1 $2 $3 k256 "block_k=256" $fl $rep
    done
  done
done
cat $R/table.md
tar czf $OUT/r.tgz -C $OUT r
