"""int8 x int8 GEMM with per-token and per-channel scales on SM90 (the W8A8 recipe of SmoothQuant-style checkpoints)::

    out[m, n] = scale_a[m] * scale_b[n] * sum_k a[m, k] * b[n, k]

This module is tilegemm's own API, not DeepGEMM's: ``import deep_gemm`` does not load it and the package's top level
stays exactly DeepGEMM 2.6.1's surface. Import it by name::

    import deep_gemm.int8 as i8

    qa, sa = i8.quantize(x)               # x [M, K] bf16/fp16/fp32 -> int8 [M, K], fp32 [M] (per-row absmax / 127)
    qb, sb = i8.quantize(w)               # the weight [N, K], once
    out = i8.gemm_nt(qa, qb, sa, sb)      # bf16 [M, N]

Operands: ``a`` int8 [M, K] and ``b`` int8 [N, K], both contiguous along K (a K-major view such as a row slice is
fine); K a multiple of 16 (16-byte rows for TMA) and at most 131071 (the products sum exactly in int32). Scales: fp32,
``scale_a`` [M] or [M, 1], ``scale_b`` [N] or [1, N], contiguous. ``out``: bf16 [M, N] with contiguous rows, N a
multiple of 8; allocated when not given. The sums are exact; each output element is scaled once in fp32 and rounded
to bf16 once.

The call runs on torch's current stream (CUDA graphs capture it), with the SM count ``deep_gemm.set_num_sms`` set; a
call whose signature was seen before runs the plan its first call made (as the BF16 and FP8 GEMMs do). Bad arguments
raise TypeError/ValueError naming the argument. :func:`reference` is the float64 math the GPU results are tested
against.
"""
from ._gemm import gemm_nt
from ._quantize import quantize, reference

__all__ = ['gemm_nt', 'quantize', 'reference']
