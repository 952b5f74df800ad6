#!/usr/bin/env bash
# Device call 5: the K-split warpgroup pair (BF16, 64-row tiles, two consumer warpgroups on alternate stages):
# GPU tests, then A/B per shape (selector's new pick vs block_m=64,math_wg=1 = the previous pick), interleaved.
set -u
R=$OUT/r; mkdir -p $R
export TILEGEMM_COMMIT=${TILEGEMM_COMMIT:-wip}
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=240 GPU_SUITE_GTEST_FILTER='*KSplitPair*:*TwoAtom*:DeepSeek/Bf16Gemm*:Representative*:*KGrouped*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=$PWD/build-gpu/tilegemm
echo "| shape | variant | rep | config | ours µs | cuBLAS µs | diff |" > $R/table.md
echo "|---|---|---:|---|---:|---:|---|" >> $R/table.md
one() { # shape-args variant filter rep
  local m=$1 n=$2 k=$3 v=$4 f=$5 rep=$6 j=$R/$1x$2x$3-$4-$6.json
  TILEGEMM_CONFIG_FILTER=$f timeout 60 $B bench --m $m --n $n --k $k --warmup-ms 10 --rep-ms 100 --json $j > /dev/null 2>&1
  python3 - $j "${m}x${n}x${k}" $v $rep >> $R/table.md <<'PY'
import json,sys
try:
  r=json.load(open(sys.argv[1]))["rows"][0]
  print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {r.get('config','')} | {r['ours']['median_us']:.2f} | {r['cublas']['median_us']:.2f} | {r.get('calc_diff',-1):.1e} {r.get('error','')[:40]} |")
except Exception as e: print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | fail {e} | | | |")
PY
}
for shape in "64 2112 7168" "64 24576 1536" "64 32768 512" "64 7168 16384" "64 4096 7168" "64 7168 2048" "128 2112 7168" "128 7168 16384" "128 4096 7168" "128 7168 2048"; do
  set -- $shape
  for rep in 1 2; do
    one $1 $2 $3 wg1 "block_m=64,math_wg=1" $rep
    one $1 $2 $3 pair "" $rep
  done
  one $1 $2 $3 pair-k128 "block_m=64,math_wg=2,block_k=128" 1
done
timeout 150 $B bench --suite deepseek --dtype bf16 --json $R/bf16-suite.json --md $R/bf16-suite.md > $R/bench-suite.log 2>&1
cat $R/summary.md; cat $R/table.md; grep -i geometric $R/bf16-suite.md
tar czf $OUT/r.tgz -C $OUT r
