"""Guarded tensors and the float64 check of the robustness run.

Every operand and output is a strided view into a larger buffer whose other elements hold a NaN with a marked
payload: an output's guard (the bands before and after it, and the padding between its rows) must still hold
exactly those bits after the call, and an input's guard feeds NaN into any result that read outside the view.
Outputs are poisoned the same way before the call, so an element the kernel was meant to write and did not
fails the value check.
"""
import torch

# The bit pattern every guard and poisoned output element holds (a quiet NaN with a payload no kernel writes).
POISON = {
    torch.bfloat16: (torch.int16, 0x7FAB),
    torch.float16: (torch.int16, 0x7EAB),
    torch.float32: (torch.int32, 0x7FABCDEF),
    torch.float8_e4m3fn: (torch.uint8, 0x7F),
    torch.int8: (torch.int8, 0x7B),
    torch.int32: (torch.int32, 0x7FABCDEF),
}
GUARD_BYTES = 512
# Per-element error bounds: |d - ref| <= rel * |ref| + acc * (|a| @ |b|ᵀ + |c|). rel covers the rounding of D to
# its dtype; acc the accumulation inside the kernel (fp32 for BF16 wgmma, about 14 bits within FP8's 128-wide K
# blocks before the fp32 promotion), each with a wide margin: a wrong tile, row, scale or K block is off by about
# |ref|, a hundred times more on the sizes drawn here. 'tf32': products of fp32 B reduced to TF32 (10 mantissa bits,
# truncation at worst) by the tensor cores; 'sqr_sum': a sum of squares (|ref| and |a| @ |b|ᵀ alike), 1e-5 of it.
REL = {torch.bfloat16: 2.0**-7, torch.float16: 2.0**-10, torch.float32: 2.0**-20}
# 'wq': a weight-only GEMM's W decoded to 16 bits (an int4 weight times its bf16 scale rounds once: 2^-9 of it).
# 'int8': exact int32 sums, then one fp32 scaling (and, split, fp32 partials).
ACC = {'bf16': 2.0**-12, 'fp8': 2.0**-9, 'tf32': 2.0**-10, 'sqr_sum': 1e-5, 'wq': 2.0**-8, 'int8': 2.0**-20}


def poison_bits(dtype):
    return POISON[dtype]


class Guarded:
    """A tensor of ``shape`` (row-major, each row ``pad`` elements longer than it holds) inside a poisoned buffer."""

    def __init__(self, shape, dtype, device, pad=0):
        self.shape, self.dtype = tuple(shape), dtype
        elem = torch.empty((), dtype=dtype).element_size()
        self.offset = GUARD_BYTES // elem
        strides, step = [], 1
        for i, s in enumerate(reversed(self.shape)):
            strides.append(step)
            step *= s + (pad if i == 0 else 0)
        self.strides = tuple(reversed(strides))
        span = 0 if 0 in self.shape else 1 + sum((s - 1) * st for s, st in zip(self.shape, self.strides))
        self.buffer = torch.empty(2 * self.offset + span, dtype=dtype, device=device)
        self.poison_all()
        self.view = self.buffer.as_strided(self.shape, self.strides, self.offset)

    def _bits(self, t):
        int_dtype, _ = POISON[self.dtype]
        return t.view(int_dtype)

    def poison_all(self):
        int_dtype, value = POISON[self.dtype]
        self._bits(self.buffer).fill_(value if int_dtype != torch.uint8 else value & 0xFF)

    def poison_view(self):
        int_dtype, value = POISON[self.dtype]
        self._bits(self.buffer).as_strided(self.shape, self.strides, self.offset).fill_(value)

    def outside_mask(self):
        mask = torch.ones(self.buffer.numel(), dtype=torch.bool, device=self.buffer.device)
        mask.as_strided(self.shape, self.strides, self.offset).fill_(False)
        return mask

    def guard_changes(self):
        """How many elements outside the view no longer hold the poison bits."""
        _, value = POISON[self.dtype]
        bits = self._bits(self.buffer)[self.outside_mask()]
        return int((bits != value).sum())


def random_values(shape, gen, device, scale, dtype=torch.bfloat16):
    """Normal values times ``scale`` in ``dtype``, from ``gen`` (never zeros: a kernel that writes nothing fails)."""
    return (torch.randn(shape, generator=gen, device=device) * scale).to(dtype)


def check_output(out, ref, absref, d_dtype, operand_dtype, rows=None, extra=None):
    """(bad element count, worst error/bound, first bad index) of out against the float64 ref; ``rows`` (a bool
    tensor over the leading dimensions) limits the check to the rows the contract defines, ``extra`` adds to the
    bound per element."""
    if out.numel() == 0:
        return 0, 0.0, None
    err = (out.double() - ref).abs()
    bound = REL[d_dtype] * ref.abs() + ACC[operand_dtype] * absref
    if extra is not None:
        bound = bound + extra
    bad = ~(err <= bound)  # NaN (an unwritten, poisoned element) is bad
    ratio = torch.where(bound > 0, err / bound.clamp(min=1e-300), torch.where(err > 0, torch.inf, 0.0))
    if rows is not None:
        while rows.dim() < bad.dim():
            rows = rows.unsqueeze(-1)
        bad &= rows
        ratio = torch.where(rows, ratio, 0.0)
    ratio = torch.nan_to_num(ratio, nan=torch.inf)
    count = int(bad.sum())
    first = None
    if count:
        first = tuple(int(i) for i in bad.nonzero()[0])
    return count, float(ratio.max()) if ratio.numel() else 0.0, first
