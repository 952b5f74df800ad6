#!/usr/bin/env bash
# Session 11 device call 2 (warm machine, build-gpu kept from call 1): the prepared BF16 descriptor probe's A/B only
# (bench/probes/bf16-descriptors: the BF16 DeepSeek suite, base vs descriptors built before the full-barrier wait,
# interleaved, two rounds). Its GPU-test half runs in a later call if the variant wins.
set -u
[[ -x build-gpu/tilegemm ]] || GPU_SUITE_STEPS="build" OUT=$OUT/b scripts/gpu-suite > /dev/null 2>&1
root=$PWD
variant=$(bench/probes/patched-device bench/probes/bf16-descriptors/descriptors-before-wait.diff $OUT/v) || exit 1
SWEEP_ROUNDS=2 SWEEP_OUT=$OUT/sweep timeout 500 scripts/config-sweep build-gpu/tilegemm --suite deepseek --dtype bf16 -- \
  "-" "- TILEGEMM_DEVICE_INCLUDE_DIR=$variant" > /dev/null 2>&1
cp $OUT/sweep/sweep.md $OUT/bf16-descriptors.md
tar czf $OUT/rest.tgz -C $OUT sweep 2>/dev/null; rm -rf $OUT/sweep $OUT/v $OUT/b
cat $OUT/bf16-descriptors.md
