#!/usr/bin/env bash
# Session 13 call 8 (78c6418): the whole GPU test list through the suite script. The gpu step hit its 420 s
# timeout after 441 passed / 4 skipped / 0 failed (the JSON report is lost on a timeout); call 9 ran the rest.
export TILEGEMM_COMMIT=78c6418
GPU_SUITE_STEPS="smi build gpu" bash scripts/gpu-suite
