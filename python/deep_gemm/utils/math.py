"""Rounding helpers and DeepGEMM's FP8 and FP4 cast recipes (torch is imported on first use only).

FP8 (E4M3, max 448): amax per group clamped to 1e-4, scale = amax / 448 (rounded up to a power of two with
use_ue8m0), x * (1 / scale) cast to float8_e4m3fn; inputs are padded with zeros to whole groups for the
per-block and per-token casts.
FP4 (E2M1, max 6, two codes per byte, the even column in the low nibble): scale = amax / 6, each scaled value
rounded to the nearest of {0, 0.5, 1, 1.5, 2, 3, 4, 6} (ties go down, larger values saturate to 6), the sign
in bit 3 of a code except for zero. These casts and their inverses give bit-identical results to DeepGEMM's.
"""
from typing import Tuple

__all__ = [
    'ceil_div', 'align', 'ceil_to_ue8m0', 'pack_ue8m0_to_int', 'unpack_ue8m0_from_int',
    'per_token_cast_to_fp8', 'per_channel_cast_to_fp8', 'per_block_cast_to_fp8', 'per_custom_dims_cast_to_fp8',
    'per_token_cast_to_fp4', 'transpose_packed_fp4', 'cast_back_from_fp4',
]

_FP8_MAX = 448.0
_FP4_MAX = 6.0
_AMAX_FLOOR = 1e-4
# Midpoints between neighbouring E2M1 magnitudes: a code is the number of them strictly below |x|.
_FP4_MIDPOINTS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)
_FP4_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
_FP4_SIGN = 0x8


def ceil_div(x: int, y: int) -> int:
    if y == 0:
        raise ValueError(f'y: expected a non-zero divisor, got {y!r}')
    return (x + y - 1) // y


def align(x: int, y: int) -> int:
    return ceil_div(x, y) * y


def _torch():
    import torch
    return torch


def _require_2d(x, name):
    if x.dim() != 2:
        raise ValueError(f'{name}: expected a 2-D tensor, got {x.dim()}-D {tuple(x.shape)}')


def ceil_to_ue8m0(x):
    """Rounds each |x| up to a power of two (an exponent-only UE8M0 value), as float32."""
    torch = _torch()
    bits = x.abs().float().view(torch.int32)
    exponent = (bits >> 23) & 0xFF
    # Any mantissa bit means |x| is above the power of two of its exponent: go one up.
    exponent = exponent + ((bits & 0x7FFFFF) != 0).to(torch.int32)
    return (exponent.clamp(1, 254) << 23).view(torch.float32)


def pack_ue8m0_to_int(x):
    """Packs four UE8M0 scales (float32 powers of two along the last dim) into one int32, lowest first."""
    torch = _torch()
    if x.dtype != torch.float32 or x.size(-1) % 4 != 0:
        raise ValueError(f'x: expected float32 with a last dimension divisible by 4, got {x.dtype} {tuple(x.shape)}')
    bits = x.view(torch.int32)
    if bool(((bits & 0x7FFFFF) != 0).any()) or bool((bits < 0).any()):
        raise ValueError('x: expected non-negative powers of two (UE8M0 values, as ceil_to_ue8m0 returns), '
                         'got a mantissa or a sign bit')
    return (bits >> 23).to(torch.uint8).view(torch.int32)


def unpack_ue8m0_from_int(packed_sf):
    """The inverse of pack_ue8m0_to_int: int32 [..., k] -> float32 [..., 4k] powers of two."""
    torch = _torch()
    return (packed_sf.view(torch.uint8).to(torch.int32) << 23).view(torch.float32)


def _scale(amax, use_ue8m0, max_value=_FP8_MAX):
    sf = amax / max_value
    return ceil_to_ue8m0(sf) if use_ue8m0 else sf


def per_token_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128,
                          use_packed_ue8m0: bool = False) -> Tuple:
    """[M, N] -> (fp8 [M, N], scales [M, ceil(N / gran_k)]) with one scale per row and gran_k columns
    (int32 [M, ceil(N / gran_k) / 4] with use_packed_ue8m0)."""
    torch = _torch()
    _require_2d(x, 'x')
    m, n = x.shape
    padded_n = align(n, gran_k)
    padded = torch.zeros((m, padded_n), dtype=x.dtype, device=x.device)
    padded[:, :n] = x
    groups = padded.view(m, padded_n // gran_k, gran_k)
    sf = _scale(groups.abs().float().amax(dim=2).clamp(min=_AMAX_FLOOR), use_ue8m0)
    x_fp8 = (groups * (1.0 / sf.unsqueeze(2))).to(torch.float8_e4m3fn).view(m, padded_n)[:, :n].contiguous()
    return x_fp8, (pack_ue8m0_to_int(sf) if use_packed_ue8m0 else sf)


def per_channel_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128) -> Tuple:
    """[M, N] with M % gran_k == 0 -> (fp8 [M, N], scales [M / gran_k, N]): one scale per column and gran_k rows."""
    torch = _torch()
    if x.dim() != 2 or x.size(0) % gran_k != 0:
        raise ValueError(f'x: expected a 2-D tensor with rows divisible by {gran_k}, got {tuple(x.shape)}')
    m, n = x.shape
    groups = x.view(-1, gran_k, n)
    sf = _scale(groups.abs().float().amax(dim=1).clamp(min=_AMAX_FLOOR), use_ue8m0)
    return (groups * (1.0 / sf.unsqueeze(1))).to(torch.float8_e4m3fn).view(m, n), sf


def per_block_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128) -> Tuple:
    """[M, N] -> (fp8 [M, N], scales [ceil(M / gran_k), ceil(N / gran_k)]): one scale per gran_k² block."""
    torch = _torch()
    _require_2d(x, 'x')
    m, n = x.shape
    padded = torch.zeros((align(m, gran_k), align(n, gran_k)), dtype=x.dtype, device=x.device)
    padded[:m, :n] = x
    blocks = padded.view(-1, gran_k, padded.size(1) // gran_k, gran_k)
    sf = _scale(blocks.abs().float().amax(dim=(1, 3), keepdim=True).clamp(min=_AMAX_FLOOR), use_ue8m0)
    x_fp8 = (blocks * (1.0 / sf)).to(torch.float8_e4m3fn)
    return x_fp8.view_as(padded)[:m, :n].contiguous(), sf.view(blocks.size(0), blocks.size(2))


def per_custom_dims_cast_to_fp8(x, dims: Tuple, use_ue8m0: bool) -> Tuple:
    """One scale per index of the kept ``dims`` (amax over every other dimension)."""
    torch = _torch()
    reduced = tuple(i for i in range(x.dim()) if i not in set(dims))
    sf = _scale(x.abs().float().amax(dim=reduced, keepdim=True).clamp(min=_AMAX_FLOOR), use_ue8m0)
    return (x * (1.0 / sf)).to(torch.float8_e4m3fn), sf.squeeze()


def _fp4_codes(x):
    """E2M1 codes (uint8, 0..15) of float values already scaled into [-6, 6] (beyond saturates)."""
    torch = _torch()
    magnitude = x.abs()
    code = torch.zeros(x.shape, dtype=torch.uint8, device=x.device)
    for midpoint in _FP4_MIDPOINTS:
        code += (magnitude > midpoint).to(torch.uint8)
    negative = (x < 0) & (code != 0)
    return code | (negative.to(torch.uint8) << 3)


def _pack_nibbles(codes):
    """[R, 2C] codes -> int8 [R, C] bytes: column 2j in the low nibble, 2j + 1 in the high one."""
    torch = _torch()
    pairs = codes.view(codes.size(0), -1, 2)
    return (pairs[:, :, 0] | (pairs[:, :, 1] << 4)).view(torch.int8)


def _unpack_nibbles(packed):
    """int8 [R, C] bytes -> uint8 [R, 2C] codes (inverse of _pack_nibbles)."""
    torch = _torch()
    raw = packed.view(torch.uint8)
    return torch.stack((raw & 0x0F, raw >> 4), dim=-1).view(raw.size(0), -1)


def per_token_cast_to_fp4(x, use_ue8m0: bool, gran_k: int = 128,
                          use_packed_ue8m0: bool = False) -> Tuple:
    """[M, N] (N even) -> (packed int8 [M, N / 2], scales [M, ceil(N / gran_k)]). With use_packed_ue8m0 (which
    needs use_ue8m0) the scales are padded with 1.0 to a multiple of 4 and packed: int32 [M, ceil(.. / 4)]."""
    torch = _torch()
    _require_2d(x, 'x')
    m, n = x.shape
    if n % 2 != 0:
        raise ValueError(f'x: expected an even number of columns (two FP4 codes per byte), got {tuple(x.shape)}')
    if use_packed_ue8m0 and not use_ue8m0:
        raise ValueError('use_packed_ue8m0: expected False unless use_ue8m0 is True (only UE8M0 scales pack), '
                         'got True')
    padded_n = align(n, gran_k)
    padded = torch.zeros((m, padded_n), dtype=x.dtype, device=x.device)
    padded[:, :n] = x
    groups = padded.view(m, padded_n // gran_k, gran_k)
    sf = _scale(groups.abs().float().amax(dim=2).clamp(min=_AMAX_FLOOR), use_ue8m0, _FP4_MAX)
    codes = _fp4_codes(groups * (1.0 / sf.unsqueeze(2))).view(m, padded_n)
    packed = _pack_nibbles(codes)[:, :n // 2].contiguous()
    if not use_packed_ue8m0:
        return packed, sf
    # Four scales per int32: pad with 2^0 (a valid UE8M0 value) covering no column.
    missing = align(sf.size(1), 4) - sf.size(1)
    if missing:
        sf = torch.cat((sf, torch.ones((m, missing), dtype=sf.dtype, device=sf.device)), dim=1)
    return packed, pack_ue8m0_to_int(sf)


def transpose_packed_fp4(a):
    """Packed int8 [M, N / 2] (M even) -> packed int8 [N, M / 2]: the FP4 matrix transposed, repacked."""
    torch = _torch()
    if a.dtype != torch.int8 or a.dim() != 2:
        raise ValueError(f'a: expected a 2-D int8 tensor of packed FP4 codes, got {a.dtype} {tuple(a.shape)}')
    if a.size(0) % 2 != 0:
        raise ValueError(f'a: expected an even number of rows (they become packed pairs), got {tuple(a.shape)}')
    return _pack_nibbles(_unpack_nibbles(a).t().contiguous()).contiguous()


def cast_back_from_fp4(packed, sf, gran_k: int = 128, use_packed_ue8m0: bool = False):
    """float32 [M, N] from packed int8 [M, N / 2] codes and their per-row scales (one per gran_k columns)."""
    torch = _torch()
    if use_packed_ue8m0:
        sf = unpack_ue8m0_from_int(sf)
    codes = _unpack_nibbles(packed)
    magnitudes = torch.tensor(_FP4_MAGNITUDES, dtype=torch.float32, device=packed.device)
    values = magnitudes[(codes & 0x7).long()]
    # Codes above the sign bit are negative; 0x8 itself (a negative zero) decodes to +0.0.
    values = torch.where(codes > _FP4_SIGN, -values, values)
    n = codes.size(1)
    return values * sf[:, torch.arange(n, device=packed.device) // gran_k]
