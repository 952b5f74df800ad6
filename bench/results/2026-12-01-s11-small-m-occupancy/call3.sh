#!/usr/bin/env bash
# Session 11 device call 3 (warm, build-gpu kept): N = 7168 at small M leaves SMs idle (64x64 tiles: 112 of 132).
# Does stream-K over the same tile (all 132 SMs) pay? Selector's pick vs forced stream-K (atomic fix-up), interleaved,
# two rounds, FP8 and BF16.
set -u
[[ -x build-gpu/tilegemm ]] || GPU_SUITE_STEPS="build" OUT=$OUT/b scripts/gpu-suite > /dev/null 2>&1
B=build-gpu/tilegemm; T=$OUT/tables.md; R=$OUT/r; mkdir -p $R
SK=TILEGEMM_GEMM_SCHEME=stream-k
echo "# selector vs stream-K on the same tile" > $T
sweep() {  # name dtype m n k variants...
  local name=$1 dt=$2 m=$3 n=$4 k=$5; shift 5
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/$name timeout 120 scripts/config-sweep $B --m $m --n $n --k $k --dtype $dt -- "$@" > /dev/null 2>&1
  { echo; echo "## $name"; cat $R/$name/sweep.md; echo;
    python3 -c "
import json,glob
for f in sorted(glob.glob('$R/$name/*.json'), key=lambda p:int(p.split('/')[-1][:-5])):
    r=json.load(open(f))['rows'][0]; print(f'- run {f.split(\"/\")[-1][:-5]}: calc_diff {r[\"calc_diff\"]:.1e} {r[\"error\"]}')
"; } >> $T
}
sweep fp8-64x7168x16384 fp8 64 7168 16384 "-" "$SK block_m=64,block_n=64,stages=13" "$SK block_m=64,block_n=128,stages=8"
sweep fp8-64x7168x2048 fp8 64 7168 2048 "-" "$SK block_m=64,block_n=64,stages=13"
sweep fp8-128x7168x16384 fp8 128 7168 16384 "-" "$SK block_m=128,block_n=64,math_wg=2,stages=8" "$SK block_m=64,block_n=112"
sweep bf16-64x7168x16384 bf16 64 7168 16384 "-" "$SK block_m=64,block_n=64,stages=13"
sweep bf16-128x7168x16384 bf16 128 7168 16384 "-" "$SK block_m=64,block_n=112"
tar czf $OUT/rest.tgz -C $R . 2>/dev/null; rm -rf $R $OUT/b
cat $T
