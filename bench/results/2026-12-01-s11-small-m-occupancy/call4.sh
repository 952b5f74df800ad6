#!/usr/bin/env bash
# Session 11 device call 4: is a small-M shape on 64x64 tiles bound per SM (then more tiles at the same per-CTA
# work cost nothing, and tiles that use all SMs would pay) or by HBM bandwidth (time grows with the bytes)?
# Same config, N = 7168 (112 tiles), 8192 (128), 8448 (132); FP8 and BF16; two rounds.
set -u
[[ -x build-gpu/tilegemm ]] || GPU_SUITE_STEPS="build" OUT=$OUT/b scripts/gpu-suite > /dev/null 2>&1
B=build-gpu/tilegemm; T=$OUT/tables.md; R=$OUT/r; mkdir -p $R
echo "# N sweep at fixed tile" > $T
for dt in fp8 bf16; do
  for k in 16384 2048; do
    for n in 7168 8192 8448; do
      f="block_m=64,block_n=64,stages=13"
      SWEEP_ROUNDS=2 SWEEP_OUT=$R/$dt-$n-$k timeout 60 scripts/config-sweep $B --m 64 --n $n --k $k --dtype $dt -- "$f" > /dev/null 2>&1
      { echo; echo "## $dt 64x${n}x$k"; tail -n +3 $R/$dt-$n-$k/sweep.md; } >> $T
    done
  done
done
rm -rf $R $OUT/b
cat $T
