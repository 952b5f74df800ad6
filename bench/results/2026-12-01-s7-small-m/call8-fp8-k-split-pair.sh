#!/usr/bin/env bash
# Device call 8: the FP8 K-split warpgroup pair: GPU tests (forced pair), then A/B on 10 small-M shapes.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="build gpu" GPU_SUITE_TIMEOUT_GPU=90 GPU_SUITE_GTEST_FILTER='KSplitPair/Fp8Dense*:*Fp8MGroupedMasked*:Representative/Fp8Dense*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED) +\]|calc_diff|\[fp8" $R/suite.log > $OUT/tests.txt
B=$PWD/build-gpu/tilegemm
T=$OUT/table.md
echo "| shape | variant | config | ours µs | cuBLAS µs | diff |" > $T
echo "|---|---|---|---:|---:|---|" >> $T
for shape in "64 2112 7168" "128 2112 7168" "64 4096 7168" "128 4096 7168" "64 7168 16384" "128 7168 16384" "64 7168 2048" "128 7168 2048" "64 24576 1536" "64 32768 512"; do
  set -- $shape
  for v in default pair; do
    f=""; [ $v = pair ] && f="block_m=64,math_wg=2"
    j=$R/$1x$2x$3-$v.json
    TILEGEMM_CONFIG_FILTER=$f timeout 30 $B bench --m $1 --n $2 --k $3 --dtype fp8 --warmup-ms 10 --rep-ms 60 --json $j > /dev/null 2>&1
    python3 - $j "$1x$2x$3" $v >> $T <<'PY'
import json,sys
try:
  r=json.load(open(sys.argv[1]))["rows"][0]
  print(f"| {sys.argv[2]} | {sys.argv[3]} | {r.get('config','')} | {r['ours']['median_us']:.2f} | {r['cublas']['median_us']:.2f} | {r.get('calc_diff',-1):.1e} {r.get('error','')[:40]} |")
except Exception as e: print(f"| {sys.argv[2]} | {sys.argv[3]} | fail {e} | | | |")
PY
  done
done
cat $OUT/summary.md $T
