#!/usr/bin/env bash
# Is the FP8 promotion's cost energy (the card sits at its 700 W cap) or an idle tensor pipe? Times the 256x128 tile
# on 4096x4096x7168 with the real kernel and with promote-last-block-only.diff (wrong results, the promotion FFMAs
# of every K block but a tile's last removed), alternating, each bench under scripts/power-trace.
#
# Run from the repository root on the GPU machine after a build (e.g. GPU_SUITE_STEPS="smi build" scripts/gpu-suite):
#   bash bench/probes/promotion-energy/run.sh            (writes $OUT/promotion-energy.md)
# Reading it: if the ablation runs faster at the same ~700 W with a higher mean SM clock, the FFMAs cost energy and
# the clock pays for it; if it runs faster at the same clock, the tensor pipe idles while warpgroups promote.
# Measured on the H200: 200 -> 183 us at the same clock and power, so the pipe idles;
# bench/probes/fp8-promotion-overlap measures by how much (79% busy with two warpgroups).
# (The patch was regenerated against bc95efd's device code after that run.)
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${OUT:-.}/promotion-energy
mkdir -p "$out"
variant=$("$root/bench/probes/patched-device" "$root/bench/probes/promotion-energy/promote-last-block-only.diff" "$out/device-ablation") || exit 1
bench=${BENCH:-$root/build-gpu/tilegemm}
table=${OUT:-.}/promotion-energy.md
echo "| round | build | ours µs | cuBLAS µs | busy phases (start, s, mean SM MHz, mean W, % capped) |" >"$table"
echo "|---:|---|---:|---:|---|" >>"$table"
for round in 1 2; do
  for build in base ablation; do
    env_words=(TILEGEMM_CONFIG_FILTER=block_m=256,block_n=128)
    [[ $build == ablation ]] && env_words+=(TILEGEMM_DEVICE_INCLUDE_DIR=$variant)
    json=$out/$round-$build.json
    env "${env_words[@]}" "$root/scripts/power-trace" "$out/$round-$build.csv" \
      "$bench" bench --m 4096 --n 4096 --k 7168 --dtype fp8 --rep-ms 2000 --json "$json" >"$out/$round-$build.log" 2>&1
    # power_trace_summary.py's rows: | start | s | mean SM MHz | mean W | power-capped |
    phases=$(grep -E "^\| [0-9]{2}:" "$out/$round-$build.log" | sed 's/^| //; s/ |$//; s/ | /, /g' | tr '\n' ';')
    python3 - "$json" "$round" "$build" "$phases" >>"$table" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))["rows"][0]
    print(f"| {sys.argv[2]} | {sys.argv[3]} | {r['ours']['median_us']:.1f} | {r['cublas']['median_us']:.1f} | {sys.argv[4]} |")
except Exception as e:
    print(f"| {sys.argv[2]} | {sys.argv[3]} | failed: {e} | | |")
PY
  done
done
cat "$table"
