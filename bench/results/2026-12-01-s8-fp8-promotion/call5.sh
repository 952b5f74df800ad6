#!/usr/bin/env bash
# Session 8 device call 5: stream-K that walks all full waves but the last whole (data-parallel) and shares out
# only the tail. GPU tests of stream-K (BF16 + FP8, both modes, bit-identical reruns), then A/B at M=4096:
# data-parallel (the selector's tile) vs forced stream-K on the same tile.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build gpu" GPU_SUITE_TIMEOUT_GPU=150 GPU_SUITE_GTEST_FILTER='*StreamK*:*Fp8Dense*stream_k*:*Determinism*' OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
cp $R/summary.md $OUT/summary.md
grep -E "^\[ +(OK|FAILED) +\]" $R/suite.log > $OUT/tests.txt
B=$PWD/build-gpu/tilegemm
T=$OUT/table.md
echo "| round | dtype | shape | scheme | config | ours µs | cuBLAS µs | ratio | diff |" > $T
echo "|---|---|---|---|---|---:|---:|---:|---|" >> $T
run() { # round dtype scheme filter m n k
  local r=$1 dt=$2 sc=$3 f=$4 m=$5 n=$6 k=$7
  local j=$R/$r-$dt-$m-$n-$k-$sc.json
  TILEGEMM_GEMM_SCHEME=$sc TILEGEMM_CONFIG_FILTER=$f timeout 60 $B bench --m $m --n $n --k $k --dtype $dt --warmup-ms 10 --rep-ms 100 --json $j > $j.log 2>&1
  python3 - $j "$r" $dt "${m}x${n}x${k}" $sc >> $T <<'PY'
import json,sys
a=sys.argv
try:
  r=json.load(open(a[1]))["rows"][0]
  o=r['ours']['median_us']; c=r['cublas']['median_us']
  print(f"| {a[2]} | {a[3]} | {a[4]} | {a[5]} | {r.get('config','')} | {o:.1f} | {c:.1f} | {c/o:.3f} | {r.get('calc_diff',-1):.1e} {r.get('error','')[:40]} |")
except Exception as e: print(f"| {a[2]} | {a[3]} | {a[4]} | {a[5]} | fail {e} | | | | |")
PY
}
for round in 1 2; do
  for s in "4096 7168 16384" "4096 24576 1536" "4096 32768 512" "4096 4096 7168" "4096 7168 2048"; do
    for sc in data-parallel stream-k; do run $round fp8 $sc "block_m=256,block_n=128,cluster_m=1" $s; done
  done
  for sc in data-parallel stream-k; do run $round fp8 $sc "block_m=128,block_n=192,cluster_m=1" 4096 2112 7168; done
done
cat $OUT/summary.md $T
grep -c OK $OUT/tests.txt; grep FAILED $OUT/tests.txt | head
tar czf $OUT/r.tgz -C $OUT r
