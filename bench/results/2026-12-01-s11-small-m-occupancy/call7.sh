#!/usr/bin/env bash
# Session 11 device call 7: FP8 stages of two 128-wide K blocks (block_k = 256, working tree). GPU tests of the forced
# cases (dense, split-K/stream-K, masked), then the 12 small-M FP8 DeepSeek shapes: the selector's tile with 128-wide
# stages (its pick) against the same tile with 256-wide stages, interleaved, two rounds.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=build-gpu/tilegemm; T=$OUT/tables.md
timeout 200 build-gpu/tilegemm_gpu_tests --gtest_filter='*TwoBlockStages*:*Fp8MGroupedMasked*' > $OUT/gpu-tests.log 2>&1
echo "# GPU tests: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests.log | tr '\n' ' ')" > $T
grep -E "FAILED|calc_diff|masked" $OUT/gpu-tests.log | head -30 >> $T
echo >> $T; echo "| round | variant | shape | config | ours µs | cuBLAS µs | ratio | TFLOP/s |" >> $T
for s in "64 2112 7168 64 16 1" "64 24576 1536 64 192 1" "64 32768 512 64 128 1" "64 7168 16384 64 64 1" \
         "64 4096 7168 64 32 1" "64 7168 2048 64 64 1" "128 2112 7168 64 32 1" "128 24576 1536 128 192 2" \
         "128 32768 512 128 128 2" "128 7168 16384 128 64 2" "128 4096 7168 64 64 1" "128 7168 2048 128 64 2"; do
  set -- $s
  tile="block_m=$4,block_n=$5,math_wg=$6"
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/$1x$2x$3 timeout 60 scripts/config-sweep $B --m $1 --n $2 --k $3 --dtype fp8 -- \
    "$tile,block_k=128" "$tile,block_k=256" > /dev/null 2>&1
  tail -n +3 $R/$1x$2x$3/sweep.md >> $T
  python3 -c "
import json,glob
for f in sorted(glob.glob('$R/$1x$2x$3/*.json')):
    r=json.load(open(f))['rows'][0]
    if r['calc_diff']>1e-6 or r['error']: print('BAD', f, r['calc_diff'], r['error'])
" >> $T
done
tar czf $OUT/rest.tgz -C $R . 2>/dev/null; rm -rf $R
cat $T
