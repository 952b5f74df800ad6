#!/usr/bin/env bash
# Session 9 device call 8: the two furthest M=4096 FP8 shapes under both timers, alternating, to see how much of
# their gap to the per-shape bar is the event timer's per-call flush and launch.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=$PWD/build-gpu/tilegemm
T=$OUT/table.md
echo "| round | timer | shape | ours µs | cuBLAS µs | ratio |" > $T
echo "|---:|---|---|---:|---:|---:|" >> $T
for round in 1 2; do
  for timer in cuda-events cuda-graph; do
    for s in "4096 7168 16384" "4096 4096 7168"; do
      set -- $s
      j=$R/$round-$timer-$1x$2x$3.json
      timeout 40 $B bench --m $1 --n $2 --k $3 --dtype fp8 --timer $timer --json $j > $j.log 2>&1
      python3 - $j $round $timer >> $T <<'PY'
import json, sys
try:
  r = json.load(open(sys.argv[1]))["rows"][0]
  o, c = r["ours"]["median_us"], r["cublas"]["median_us"]
  print(f"| {sys.argv[2]} | {sys.argv[3]} | {r['shape']} | {o:.1f} | {c:.1f} | {c/o:.3f} |")
except Exception as e:
  print(f"| {sys.argv[2]} | {sys.argv[3]} | failed: {e} | | | |")
PY
    done
  done
done
cat $T
