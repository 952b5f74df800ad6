#!/usr/bin/env bash
# Does the FP8 kernel's session-10 change (each stage's wgmma descriptors built before the full-barrier wait,
# +2.6% at M=4096 FP8) pay in the BF16 kernel too? There one wgmma group stays in flight, so the descriptors' latency
# after the wait is hidden unless the pipe drains: the narrow small-M tiles, bound by ~50 ns of consumer work per
# stage, are where it could show. Prepared in session 10 (compiles: every BF16 DeepSeek kernel under
# DG_JIT_PTXAS_CHECK=1, the first HGMMA now right after the wait), not run: no device time was left. Interleaved A/B
# of the BF16 DeepSeek suite, then the BF16 GPU tests with the patch applied.
# Result (A/B half only): base / variant geomean 1.001 over the 18 shapes (0.976-1.017), i.e. no effect; not
# applied.
#
# Run from the repository root on the GPU machine after a build (GPU_SUITE_STEPS="smi build" scripts/gpu-suite):
#   bash bench/probes/bf16-descriptors/run.sh            (tables in $OUT/bf16-descriptors.md)
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${OUT:-.}/bf16-descriptors
mkdir -p "$out"
variant=$("$root/bench/probes/patched-device" "$root/bench/probes/bf16-descriptors/descriptors-before-wait.diff" "$out/device-variant") || exit 1
bench=${BENCH:-$root/build-gpu/tilegemm}
SWEEP_ROUNDS=2 SWEEP_OUT=$out/sweep "$root/scripts/config-sweep" "$bench" --suite deepseek --dtype bf16 -- \
  "-" "- TILEGEMM_DEVICE_INCLUDE_DIR=$variant" > /dev/null 2>&1
cp "$out/sweep/sweep.md" "${OUT:-.}/bf16-descriptors.md"
# Correctness with the patch: the GPU tests read the device headers from the same variable.
TILEGEMM_DEVICE_INCLUDE_DIR=$variant timeout 300 "$(dirname "$bench")/tilegemm_gpu_tests" \
  --gtest_filter='*Bf16*:*SplitK*:*StreamK*:*MGrouped*:-*Fp8*' > "$out/gpu-tests.log" 2>&1
tail -3 "$out/gpu-tests.log" >> "${OUT:-.}/bf16-descriptors.md"
cat "${OUT:-.}/bf16-descriptors.md"
