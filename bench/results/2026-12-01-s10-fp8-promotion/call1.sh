#!/usr/bin/env bash
# Session 10 device call 1: (a) the promotion-energy probe prepared in session 9; (b) DeepGEMM's "fewest SMs that
# keep the wave count" (num_min_sms) on our M=4096 FP8 picks: --num-sms 0 (all 132) against ceil(tiles / waves).
set -u
R=$OUT/r; mkdir -p $R
GPU_SUITE_STEPS="smi build" OUT=$R scripts/gpu-suite > $R/gpu-suite.out 2>&1
B=$PWD/build-gpu/tilegemm
T=$OUT/tables.md
OUT=$R timeout 200 bash bench/probes/promotion-energy/run.sh > $R/promotion.out 2>&1
{ echo "## promotion energy"; cat $R/promotion-energy.md; } > $T
sweep() { # name sms args...
  local name=$1 sms=$2; shift 2
  SWEEP_ROUNDS=2 SWEEP_OUT=$R/$name timeout 150 scripts/config-sweep $B "$@" -- "-" "- --num-sms=$sms" > /dev/null 2>&1
  { echo; echo "## $name"; cat $R/$name/sweep.md; } >> $T
}
sweep s7168x16384 128 --m 4096 --n 7168 --k 16384 --dtype fp8
sweep s4096x7168 128 --m 4096 --n 4096 --k 7168 --dtype fp8
sweep s24576x1536 128 --m 4096 --n 24576 --k 1536 --dtype fp8
sweep s2112x7168 118 --m 4096 --n 2112 --k 7168 --dtype fp8
sweep s7168x2048 128 --m 4096 --n 7168 --k 2048 --dtype fp8
sweep s32768x512 128 --m 4096 --n 32768 --k 512 --dtype fp8
sweep grouped 130 --suite grouped --dtype fp8
tar czf $OUT/rest.tgz -C $R . 2>/dev/null
cat $T
