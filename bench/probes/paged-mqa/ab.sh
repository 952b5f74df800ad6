#!/usr/bin/env bash
# Runs ON the GPU machine: the paged_mqa suite through the checkout and through a copy with PATCH applied (host and/or
# device code, `git diff` format), alternately, each process with DeepGEMM 2.6.1 beside it, and prints ours and
# DeepGEMM / ours per row for every run. The copy builds its own package (about a minute) and shares the
# checkout's DeepGEMM build.
#
#   bench/probes/paged-mqa/ab.sh PATCH [ROUNDS]        e.g. ab.sh bench/probes/paged-mqa/producer-per-warpgroup.diff 2
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
patch_file=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
rounds=${2:-2}
OUT=${OUT:?set OUT}
variant=${AB_VARIANT_DIR:-/tmp/paged-ab-variant}

rm -rf "$variant" && mkdir -p "$variant"
(cd "$root" && tar --exclude=./build-peer --exclude=./build-gpu --exclude=./build --exclude=./build-gt -cf - .) |
  tar -xf - -C "$variant"
(cd "$variant" && patch -p1 -s <"$patch_file")
(cd "$root" && scripts/gpu-peer python -c pass) # builds our package and DeepGEMM once
mkdir -p "$variant/build-peer" && ln -sfn "$root/build-peer/deepgemm" "$variant/build-peer/deepgemm"

for round in $(seq "$rounds"); do
  for side in checkout patched; do
    dir=$root
    [[ $side == patched ]] && dir=$variant
    (cd "$dir" && scripts/gpu-peer bench --suite paged_mqa --rounds 1 --out "$OUT/$side-$round") \
      >"$OUT/$side-$round.log" 2>&1 || { tail -20 "$OUT/$side-$round.log"; exit 1; }
    echo "== $side, round $round: B next_n H avg_kv | ours us | DeepGEMM us | DeepGEMM / ours"
    grep -E '^\| [0-9]' "$OUT/$side-$round/bench.md" | awk -F'|' '{print $2,$3,$4,$6,"|",$7,"|",$9,"|",$11}'
  done
done
