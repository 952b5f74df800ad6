"""Inputs and references: random operands (never zeros), one FP8 quantiser for every library, and float64
references computed from exactly the bytes the libraries read."""
import zlib

BF16_TOLERANCE = 1e-5
# Against a reference built from the dequantised FP8 operands, only accumulation and BF16 rounding remain.
FP8_TOLERANCE = 1e-4


def seed_for(seed, name):
    """A per-case seed: the same inputs for a case whichever suites or filters run around it."""
    return (seed * 1000003 + zlib.crc32(name.encode())) % (2 ** 31)


def randn(torch, shape, dtype=None):
    return torch.randn(shape, device='cuda', dtype=dtype or torch.bfloat16)


class Quantiser:
    """DeepGEMM's FP8 casts (fp32 scales, no UE8M0 rounding) from one package, used for every library's inputs
    so that all of them read the same bytes."""

    def __init__(self, module, source):
        self.utils = module.utils
        self.source = source

    def token(self, x):
        """[M, K] -> (fp8 [M, K], fp32 [M, ceil(K / 128)]): 1x128 scales."""
        return self.utils.per_token_cast_to_fp8(x, use_ue8m0=False)

    def block(self, x):
        """[N, K] -> (fp8 [N, K], fp32 [ceil(N / 128), ceil(K / 128)]): 128x128 scales."""
        return self.utils.per_block_cast_to_fp8(x, use_ue8m0=False)

    def channel(self, x):
        """[K, MN] with K % 128 == 0 -> (fp8 [K, MN], fp32 [K / 128, MN]): 128x1 scales."""
        return self.utils.per_channel_cast_to_fp8(x, use_ue8m0=False)

    def token_grouped(self, x):
        """[G, M, K] -> (fp8 [G, M, K], fp32 [G, M, ceil(K / 128)]): per-token casts of each row."""
        g, m, k = x.shape
        data, sf = self.token(x.reshape(g * m, k))
        return data.view(g, m, k), sf.view(g, m, -1)

    def block_grouped(self, torch, x):
        """[G, N, K] -> (fp8 [G, N, K], fp32 [G, ceil(N / 128), ceil(K / 128)]): per-block casts per group."""
        g, n, k = x.shape
        data = torch.empty((g, n, k), dtype=torch.float8_e4m3fn, device=x.device)
        sf = torch.empty((g, (n + 127) // 128, (k + 127) // 128), dtype=torch.float32, device=x.device)
        for i in range(g):  # copies into preallocated tensors: stacking float8 is not supported by every torch
            data[i], sf[i] = self.block(x[i])
        return data, sf


def _expand(torch, sf, rows, cols, gran_rows, gran_cols):
    """Scales [ceil(rows / gran_rows), ceil(cols / gran_cols)] (any leading dims) as float64 per element."""
    sf = sf.double()
    if gran_rows > 1:
        sf = sf.repeat_interleave(gran_rows, dim=-2)
    if gran_cols > 1:
        sf = sf.repeat_interleave(gran_cols, dim=-1)
    return sf[..., :rows, :cols]


def _exact(data):
    # float8 -> float32 is exact and supported by every torch with float8 types; float64 from there.
    return data.float().double()


def dequant_token(torch, pair):
    data, sf = pair
    return _exact(data) * _expand(torch, sf, data.shape[-2], data.shape[-1], 1, 128)


def dequant_block(torch, pair):
    data, sf = pair
    return _exact(data) * _expand(torch, sf, data.shape[-2], data.shape[-1], 128, 128)


def dequant_channel(torch, pair):
    data, sf = pair
    return _exact(data) * _expand(torch, sf, data.shape[-2], data.shape[-1], 128, 1)


def relative_diff(x, ref):
    """1 - 2<x, ref> / (|x|² + |ref|²) in float64 (DeepGEMM's calc_diff measure); NaN if x holds a NaN."""
    x, ref = x.double(), ref.double()
    denominator = float((x * x + ref * ref).sum())
    if denominator == 0:
        return 0.0
    return 1.0 - 2.0 * float((x * ref).sum()) / denominator
