#!/usr/bin/env bash
# Session 11 device call 5: tiles whose width is an odd multiple of 8 (working tree). GPU tests of the forced odd-eighth
# tiles (BF16, FP8, split-K/stream-K), then the selector's new picks (64x56 / 128x56 on N = 7168) against the 64-wide
# tiles it took before, interleaved, two rounds.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=build-gpu/tilegemm; T=$OUT/tables.md
timeout 240 build-gpu/tilegemm_gpu_tests --gtest_filter='*OddEighth*' > $OUT/gpu-tests.log 2>&1
echo "# GPU tests: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests.log | tr '\n' ' ')" > $T
grep -E "FAILED|calc_diff" $OUT/gpu-tests.log | head -40 >> $T
sweep() {  # name dtype m n k variants...
  local name=$1 dt=$2 m=$3 n=$4 k=$5; shift 5
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/$name timeout 100 scripts/config-sweep $B --m $m --n $n --k $k --dtype $dt -- "$@" > /dev/null 2>&1
  { echo; echo "## $name"; cat $R/$name/sweep.md; echo;
    python3 -c "
import json,glob
for f in sorted(glob.glob('$R/$name/*.json'), key=lambda p:int(p.split('/')[-1][:-5])):
    r=json.load(open(f))['rows'][0]; print(f'- run {f.split(\"/\")[-1][:-5]}: calc_diff {r[\"calc_diff\"]:.1e} {r[\"error\"]}')
"; } >> $T
}
sweep fp8-64x7168x16384 fp8 64 7168 16384 "-" "block_m=64,block_n=64,stages=13"
sweep fp8-128x7168x16384 fp8 128 7168 16384 "-" "block_m=128,block_n=64,math_wg=2,stages=8"
sweep fp8-64x7168x2048 fp8 64 7168 2048 "block_m=64,block_n=56" "-"
sweep fp8-128x7168x2048 fp8 128 7168 2048 "block_m=128,block_n=56,math_wg=2" "-"
sweep bf16-64x7168x16384 bf16 64 7168 16384 "-" "block_m=64,block_n=64,stages=13"
sweep bf16-64x7168x2048 bf16 64 7168 2048 "-" "block_m=64,block_n=64,stages=13"
tar czf $OUT/rest.tgz -C $R . 2>/dev/null; rm -rf $R
cat $T
