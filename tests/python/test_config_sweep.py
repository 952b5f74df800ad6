"""scripts/config-sweep against a stub `tilegemm` that reports the environment it was run with: variants set the
config filter and environment variables they name, rounds interleave the variants, failures get a row."""
import os
import pathlib
import stat
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Writes a one-row bench report whose config names the filter, scheme and device-include dir it saw; exits 3
# when asked for the shape 1x1x1.
STUB = r'''#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
out = args[args.index("--json") + 1]
if "1" == args[args.index("--m") + 1]:
    print("bench: no such luck"); sys.exit(3)
seen = "/".join(os.environ.get(v, "unset") for v in
                ("TILEGEMM_CONFIG_FILTER", "TILEGEMM_GEMM_SCHEME", "TILEGEMM_DEVICE_INCLUDE_DIR"))
row = {"shape": "4096x4096x7168", "config": seen, "ours": {"median_us": 100.0}, "cublas": {"median_us": 110.0},
       "ratio_vs_cublas": 1.1, "ours_tflops": 1234}
json.dump({"rows": [row]}, open(out, "w"))
'''


def run_sweep(tmp_path, bench_args, variants, rounds=1):
    stub = tmp_path / "tilegemm"
    stub.write_text(STUB)
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, SWEEP_OUT=str(tmp_path / "sweep"), SWEEP_ROUNDS=str(rounds),
               TILEGEMM_CONFIG_FILTER="block_m=64")  # a filter left in the caller's environment
    for name in ("TILEGEMM_GEMM_SCHEME", "TILEGEMM_DEVICE_INCLUDE_DIR"):  # importing deep_gemm sets the latter
        env.pop(name, None)
    subprocess.run([str(ROOT / "scripts" / "config-sweep"), str(stub), *bench_args, "--", *variants],
                   env=env, check=True, capture_output=True, text=True)
    lines = (tmp_path / "sweep" / "sweep.md").read_text().splitlines()
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def test_variants_set_filters_and_environment_and_rounds_interleave(tmp_path):
    rows = run_sweep(tmp_path, ["--m", "4096"],
                     ["-", "block_m=256,block_n=128",
                      "TILEGEMM_GEMM_SCHEME=stream-k block_m=256 TILEGEMM_DEVICE_INCLUDE_DIR=/x/device"],
                     rounds=2)
    assert [r[0] for r in rows] == ["1", "1", "1", "2", "2", "2"]
    configs = [r[3] for r in rows[:3]]
    # "-" runs the selector's own choice: the caller's filter is removed.
    assert configs == ["`unset/unset/unset`", "`block_m=256,block_n=128/unset/unset`",
                       "`block_m=256/stream-k//x/device`"]
    assert [r[3] for r in rows[3:]] == configs
    assert rows[0][4:8] == ["100.0", "110.0", "1.100", "1234"]


def test_a_failed_bench_gets_a_row_and_the_sweep_goes_on(tmp_path):
    rows = run_sweep(tmp_path, ["--m", "1"], ["-", "block_m=128"])
    assert len(rows) == 2
    for r in rows:
        assert "bench failed, rc 3" in r[2]
        assert "no such luck" in r[2]
