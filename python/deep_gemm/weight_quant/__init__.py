"""Weight-only quantised GEMM on SM90: ``D = A @ dequant(W).T`` with 16-bit activations and 4- or 8-bit weights.

This module is tilegemm's own API, not DeepGEMM's: it is not imported by ``import deep_gemm`` and none of its names
are in the package's top level (which stays exactly DeepGEMM 2.6.1's surface). Import it by name::

    import deep_gemm.weight_quant as wq

    w = wq.pack_int4(q, scales)          # q [N, K] codes 0..15, scales [N, K // 128] bf16: symmetric, zero point 8
    w = w.to('cuda')                     # a PackedWeight: the kernel's layout, every array a torch tensor
    d = wq.gemm(a, w)                    # a [M, K] bf16 on the GPU -> d [M, N] bf16
    d32 = wq.gemm(a, w, out=torch.empty(M, N, dtype=torch.float32, device='cuda'))

It needs torch (the weights and activations are torch tensors); the GEMM needs an SM90 GPU.

Weight formats (W is [N, K]: N output features, K input features; the math of device/tilegemm/wq_params.hpp):

- ``int4`` (w4a16): ``W[n, k] = (q - z) * s`` with codes ``q`` in 0..15, one scale ``s`` (of the activations' dtype,
  bf16 or fp16) per group of 32, 64 or 128 consecutive k of a row, and a zero point ``z`` per group (0..15), or 8
  for every group when the weight has no zero points (symmetric). :func:`pack_int4`; GPTQ and AWQ checkpoints
  (asymmetric, with zero points) through :func:`from_gptq` and :func:`from_awq`.
- ``int8`` (w8a16): ``W[n, k] = q * s[n]`` with ``q`` a signed int8 and ``s`` an fp32 scale per row (channel).
  :func:`pack_int8` (stored as the code ``q + 128``).
- ``mxfp4`` (OCP MX, as gpt-oss ships its experts): ``W[n, k] = e2m1(q) * 2^(e - 127)`` with ``q`` a 4-bit e2m1 code
  (sign, two exponent bits, one mantissa bit: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives) and ``e`` a UE8M0
  exponent per group of 32 k (0..254; 255 is NaN and refused). bf16 activations only. :func:`pack_mxfp4`.

Sizes: K a multiple of 8 (the activations' rows must be 16-byte aligned) and, for int4, of the group size; any
N >= 1. The packed arrays are padded to N a multiple of 16 and K a multiple of 64 (and of the group size) with codes
that decode to 0.

Packing runs on the CPU (the tensors are copied there and the result moved back to the input's device); call
``.to('cuda')`` on the result, or pack CUDA tensors, before :func:`gemm`. :func:`unpack` is the inverse of packing,
:func:`reference` / :func:`reference_weight` the float64 math the GPU results are tested against.

How a call runs (:func:`plan` says, as does ``DG_PRINT_CONFIGS=1`` at each new shape): small M decodes W in
registers between the load and the tensor cores (bound by reading the packed bytes: about 4x fewer than a bf16
weight's for int4 / mxfp4); large M dequantises W once into a 16-bit scratch and runs the dense GEMM. :func:`gemm`
runs on torch's current stream (CUDA graphs capture it) and uses the SM count ``deep_gemm.set_num_sms`` set.

MoE experts (M-grouped GEMMs, as DeepGEMM's m_grouped_* over a weight per expert)::

    experts = wq.stack([wq.pack_mxfp4(b, e) for b, e in expert_tensors])  # one PackedWeight, num_experts = E
    d = wq.m_grouped_gemm_masked(a, experts, masked_m, expected_m)       # a [E, M_max, K], masked_m int32 [E]
    d = wq.m_grouped_gemm_contiguous(a, experts, grouped_layout)         # a [M, K], grouped_layout int32 [M]

:func:`stack` puts single weights of one format and shape together (every array gains a leading [E] dimension;
``w.expert(i)`` is expert i's weight again, a view). Contiguous: each expert's rows together, starting on a multiple
of ``deep_gemm.get_mk_alignment_for_contiguous_layout()`` (128), ``grouped_layout`` the expert of each row or -1 for
padding rows (their outputs are left unspecified). Masked: a slice of ``M_max`` rows per expert, of which the first
``masked_m[e]`` are computed (read on the GPU; the rest of ``out`` is not written); ``expected_m`` the typical rows per
expert, which picks the token block. Grouped calls always decode in registers. :func:`reference_grouped_contiguous`
and :func:`reference_grouped_masked` are their float64 oracles.

Every bad argument raises TypeError (not a tensor, not an int...) or ValueError (a wrong dtype, shape, value or
device) whose message starts with the argument's name and says what was expected and what was given. Without a GPU,
:func:`gemm` and :func:`dequantize` still check their arguments, then raise RuntimeError.
"""

# One job a module: _weight (PackedWeight, its field checks, the layout's constants), _pack (pack_int4 / pack_int8 /
# pack_mxfp4), _checkpoints (from_gptq / from_awq), _stack (stack), _unpack (unpack), _reference (the float64 oracles),
# _gpu_calls (gemm, the grouped GEMMs, dequantize, plan), _torch_ops (those four GPU calls as torch.library ops
# deep_gemm::wq_*, registered when _gpu_calls is imported); _tensor_args holds the tensor checks they share.
from ._checkpoints import from_awq, from_gptq
from ._gpu_calls import dequantize, gemm, m_grouped_gemm_contiguous, m_grouped_gemm_masked, plan
from ._pack import pack_int4, pack_int8, pack_mxfp4
from ._reference import reference, reference_grouped_contiguous, reference_grouped_masked, reference_weight
from ._stack import stack
from ._unpack import unpack
from ._weight import PackedWeight

__all__ = [
    'PackedWeight', 'pack_int4', 'pack_int8', 'pack_mxfp4', 'from_gptq', 'from_awq', 'stack', 'unpack', 'gemm',
    'm_grouped_gemm_contiguous', 'm_grouped_gemm_masked', 'dequantize', 'reference', 'reference_weight',
    'reference_grouped_contiguous', 'reference_grouped_masked', 'plan'
]

# The public names are this package's (help(), repr and pickling say deep_gemm.weight_quant), not their modules'.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
