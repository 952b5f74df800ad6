#!/usr/bin/env bash
# Session 11 device call 9 (the last ~4 device minutes): FP8 two-block stages at M = 4096 on the one tile where they
# fit with two stages (128x192 on two warpgroups), 4096x2112x7168, against the selector's 128x192 with four 128-wide
# stages; interleaved, two rounds. Builds only the CLI to save time.
set -u
R=$OUT/r; mkdir -p $R
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DTILEGEMM_DEPS_DIR=$PWD/.deps -DTILEGEMM_BUILD_TESTS=OFF > $R/cmake.log 2>&1
cmake --build build-gpu -j16 --target tilegemm > $R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
t="block_m=128,block_n=192,math_wg=2"
SWEEP_ROUNDS=2 SWEEP_OUT=$R/s timeout 60 scripts/config-sweep build-gpu/tilegemm --m 4096 --n 2112 --k 7168 --dtype fp8 -- \
  "$t,block_k=128" "$t,block_k=256" > /dev/null 2>&1
cp $R/s/sweep.md $OUT/tables.md
python3 -c "
import json,glob
for f in sorted(glob.glob('$R/s/*.json')):
    r=json.load(open(f))['rows'][0]; print(f, r['calc_diff'], r['error'])
" >> $OUT/tables.md
cat $OUT/tables.md
