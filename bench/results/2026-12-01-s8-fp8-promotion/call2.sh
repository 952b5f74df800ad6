#!/usr/bin/env bash
# Session 8 device call 2: FP8 consumer warpgroups issuing wgmma batches in turn (turns) vs cc04f81 (base);
# all FP8 GPU tests with turns.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=240 GPU_SUITE_GTEST_FILTER='*Fp8*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED) +\]" $R/suite.log > $OUT/tests.txt
B=$PWD/build-gpu/tilegemm
T=$OUT/table.md
echo "| round | shape | variant | filter | config | ours µs | cuBLAS µs | ratio | TFLOP/s | diff |" > $T
echo "|---|---|---|---|---|---:|---:|---:|---:|---|" >> $T
run() { # round variant filter m n k
  local r=$1 v=$2 f=$3 m=$4 n=$5 k=$6
  local j=$R/$r-$m-$n-$k-$v-${f//[=,]/_}.json
  TILEGEMM_DEVICE_INCLUDE_DIR=$PWD/.exp/var/$v/device TILEGEMM_CONFIG_FILTER=$f timeout 60 $B bench --m $m --n $n --k $k --dtype fp8 --warmup-ms 10 --rep-ms 100 --json $j > $j.log 2>&1
  python3 - $j "$r" "${m}x${n}x${k}" $v "$f" $m $n $k >> $T <<'PY'
import json,sys
a=sys.argv
try:
  r=json.load(open(a[1]))["rows"][0]
  o=r['ours']['median_us']; c=r['cublas']['median_us']
  fl=2*int(a[6])*int(a[7])*int(a[8])/o/1e6
  print(f"| {a[2]} | {a[3]} | {a[4]} | {a[5]} | {r.get('config','')} | {o:.1f} | {c:.1f} | {c/o:.3f} | {fl:.0f} | {r.get('calc_diff',-1):.1e} {r.get('error','')[:40]} |")
except Exception as e: print(f"| {a[2]} | {a[3]} | {a[4]} | {a[5]} | fail {e} | | | | | |")
PY
}
for round in 1 2; do
  for shape in "4096 4096 7168" "4096 7168 16384" "4096 24576 1536" "4096 32768 512" "4096 7168 2048" "128 24576 1536" "128 7168 16384" "128 4096 7168"; do
    for v in base turns; do run $round $v "" $shape; done
  done
  for v in base turns; do run $round $v "block_m=128,block_n=192,cluster_m=1" 4096 2112 7168; done
done
cat $OUT/summary.md $T
tar czf $OUT/r.tgz -C $OUT r
