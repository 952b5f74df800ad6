#!/usr/bin/env bash
# Session 11 device call 1: do two CTAs per SM help the latency-bound small-M shapes? TILEGEMM_CTAS_PER_SM=2 lets the
# persistent grid hold 2 CTAs per SM; stages are cut so two fit in shared memory (<= 113 KB each). Base = the
# selector's pick (1 CTA per SM). Interleaved per shape, two rounds; calc_diff of every run listed after the table.
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=$PWD/build-gpu/tilegemm
T=$OUT/tables.md
C2=TILEGEMM_CTAS_PER_SM=2
SK2=TILEGEMM_GEMM_SCHEME=split-k:2
SK4=TILEGEMM_GEMM_SCHEME=split-k:4
echo "# 1 CTA per SM (selector) vs 2 CTAs per SM" > $T
sweep() {  # name dtype m n k variants...
  local name=$1 dt=$2 m=$3 n=$4 k=$5; shift 5
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/$name timeout 150 scripts/config-sweep $B --m $m --n $n --k $k --dtype $dt -- "$@" > /dev/null 2>&1
  { echo; echo "## $name ($dt ${m}x${n}x${k})"; cat $R/$name/sweep.md; echo;
    python3 -c "
import json,glob,sys
for f in sorted(glob.glob('$R/$name/*.json'), key=lambda p:int(p.split('/')[-1][:-5])):
    r=json.load(open(f))['rows'][0]; print(f'- run {f.split(\"/\")[-1][:-5]}: calc_diff {r[\"calc_diff\"]:.1e} error {r[\"error\"]!r}')
"; } >> $T
}
sweep fp8-64x2112 fp8 64 2112 7168 "-" "$C2 $SK2 block_m=64,block_n=16,stages=10" "$C2 $SK4 block_m=64,block_n=32,stages=8"
sweep fp8-64x7168x16384 fp8 64 7168 16384 "-" "$C2 block_m=64,block_n=32,stages=8" "$C2 $SK2 block_m=64,block_n=64,stages=6"
sweep fp8-128x4096 fp8 128 4096 7168 "-" "$C2 block_m=64,block_n=32,stages=8" "$C2 $SK2 block_m=64,block_n=64,stages=6"
sweep fp8-64x4096 fp8 64 4096 7168 "-" "$C2 block_m=64,block_n=16,stages=10" "$C2 $SK2 block_m=64,block_n=32,stages=8"
sweep bf16-64x2112 bf16 64 2112 7168 "-" "$C2 $SK2 block_m=64,block_n=16,block_k=64,stages=10"
sweep bf16-64x7168x16384 bf16 64 7168 16384 "-" "$C2 block_m=64,block_n=32,block_k=64,stages=8"
tar czf $OUT/rest.tgz -C $R . 2>/dev/null
cat $T
