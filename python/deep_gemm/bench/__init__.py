"""The peer benchmark: `python -m deep_gemm.bench --help`. It times this package against DeepGEMM 2.6.1 (loaded
into the same process) and torch/cuBLAS on the same inputs; see docs/bench.md. Importing it imports no torch."""
