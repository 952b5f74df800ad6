#!/usr/bin/env bash
# Session 14: A/B of the first-stage cp.async patch (.exp/first-stage.diff, the working tree minus HEAD): the unpatched and the patched
# tree built side by side (tilegemm only), then each small-M DeepSeek shape and two M = 4096 ones timed by both
# binaries in turn, two rounds, kernel timer. Run from the repository root with carry [".deps"] (~250 s).
set -u
R=$OUT; W=$R/work; mkdir -p $W
export PATH=/usr/local/cuda/bin:$PATH
build() {  # DIR: configure and build tilegemm there
  cmake -S "$1" -B "$1/build-ab" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps \
    -DTILEGEMM_BUILD_TESTS=OFF > "$W/build-$(basename "$1").txt" 2>&1 &&
    cmake --build "$1/build-ab" -j16 --target tilegemm >> "$W/build-$(basename "$1").txt" 2>&1
}
for t in base patched; do  # the tree without build outputs, twice
  mkdir -p /tmp/ab/$t && tar cf - --exclude='./build*' --exclude=./.deps --exclude=./.exp . | tar xf - -C /tmp/ab/$t
done
(cd /tmp/ab/base && patch -R -p1 -s < "$OLDPWD/.exp/first-stage.diff") || exit 1
build /tmp/ab/base || { tail -20 $W/build-base.txt; exit 1; }
build /tmp/ab/patched || { tail -20 $W/build-patched.txt; exit 1; }
echo "| round | tree | dtype | shape | config | ours µs | cuBLAS µs |" > $R/ab-table.md
echo "|---:|---|---|---|---|---:|---:|" >> $R/ab-table.md
for round in 1 2; do
  for dt in fp8 bf16; do
    for s in "64 2112 7168" "128 2112 7168" "64 4096 7168" "128 4096 7168" "64 7168 2048" "128 7168 2048" \
             "64 7168 16384" "64 32768 512" "128 32768 512" "4096 2112 7168" "4096 7168 2048"; do
      set -- $s
      for t in base patched; do
        j=$W/$round-$t-$dt-$1-$2-$3.json
        TILEGEMM_DEVICE_INCLUDE_DIR=/tmp/ab/$t/device timeout 60 /tmp/ab/$t/build-ab/tilegemm bench --m $1 --n $2 --k $3 \
          --dtype $dt --timer kernel --warmup-ms 10 --rep-ms 100 --json $j > $j.log 2>&1
        python3 -c "import json,sys; r=json.load(open('$j'))['rows'][0]; print(f\"| $round | $t | $dt | {r['shape']} | \`{r['config']}\` | {r['ours']['median_us']:.2f} | {r['cublas']['median_us']:.2f} |\")" >> $R/ab-table.md 2>/dev/null ||
          echo "| $round | $t | $dt | $1x$2x$3 | failed: $(tail -1 $j.log | tr '|' '/') | | |" >> $R/ab-table.md
      done
    done
  done
done
tar czf $R/work.tgz -C $R work
