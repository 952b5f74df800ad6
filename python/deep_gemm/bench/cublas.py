"""The torch/cuBLAS baselines: torch.matmul for BF16 and torch._scaled_mm for FP8, with DeepGEMM's 1x128 / 128x128
block scales where the installed torch takes them (else per-tensor scales, on operands of their own)."""
from .measure import Entry, unsupported

BF16_LABEL = 'torch.matmul'
BLOCK_LABEL = 'torch._scaled_mm 1x128/128x128'
PER_TENSOR_LABEL = 'torch._scaled_mm per-tensor'
_FP8_MAX = 448.0


def bf16(torch, a, b):
    """D = A · Bᵀ for a [M, K] and b [N, K], into a preallocated D (no allocation in the timed call)."""
    d = torch.empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16, device='cuda')
    return Entry(fn=lambda: torch.matmul(a, b.t(), out=d), out=d, label=BF16_LABEL)


def _block_scale_b_candidates(torch, sfb):
    """scale_b for b = B.t(): torch checks its transpose, [ceil(N/128), ceil(K/128)] with unit stride along K and
    a row stride of ceil(K/128) (older torch) or that rounded up to 4 (newer torch)."""
    sfb = sfb.contiguous()
    nb, kb = sfb.shape
    padded = torch.zeros((nb, (kb + 3) // 4 * 4), dtype=torch.float32, device='cuda')
    padded[:, :kb] = sfb
    return (sfb.t(), padded[:, :kb].t())


def fp8_block(torch, a, b):
    """cuBLASLt through torch._scaled_mm on the same FP8 bytes and scales as the other libraries: a = (fp8 [M, K],
    1x128 scales [M, kb]), b = (fp8 [N, K], 128x128 scales [nb, kb]). The scale layouts are made here, once."""
    a_data, sfa = a
    b_data, sfb = b
    scale_a = sfa.t().contiguous().t()  # [M, kb], M-major ("outer-dim-major"), as torch requires
    failure = None
    for scale_b in _block_scale_b_candidates(torch, sfb):
        def call(scale_b=scale_b):
            return torch._scaled_mm(a_data, b_data.t(), scale_a, scale_b, out_dtype=torch.bfloat16)
        try:
            call()
            return Entry(fn=call, label=BLOCK_LABEL)
        except Exception as e:  # RuntimeError from its checks or cuBLASLt; TypeError from an older signature
            failure = failure or e
    lines = str(failure).strip().splitlines()
    return unsupported(f'{type(failure).__name__}: {lines[0] if lines else ""}', label=BLOCK_LABEL)


def block_support(torch):
    """(True, None) when this torch runs block-scaled torch._scaled_mm on a small problem, else (False, why).
    The probe quantises by hand (same recipe as DeepGEMM's casts), so it needs neither package."""
    try:
        a8 = _token_cast(torch, torch.randn((128, 256), device='cuda', dtype=torch.bfloat16))
        b8 = _block_cast(torch, torch.randn((256, 256), device='cuda', dtype=torch.bfloat16))
    except Exception as e:  # a torch without float8 types
        return False, f'{type(e).__name__}: {e}'
    entry = fp8_block(torch, a8, b8)
    return (True, None) if entry.status == 'ok' else (False, entry.message)


def _token_cast(torch, x):
    m, k = x.shape
    groups = x.float().view(m, k // 128, 128)
    sf = groups.abs().amax(dim=2).clamp(min=1e-4) / _FP8_MAX
    return (groups / sf.unsqueeze(2)).to(torch.float8_e4m3fn).view(m, k), sf


def _block_cast(torch, x):
    n, k = x.shape
    blocks = x.float().view(n // 128, 128, k // 128, 128)
    sf = blocks.abs().amax(dim=(1, 3), keepdim=True).clamp(min=1e-4) / _FP8_MAX
    return (blocks / sf).to(torch.float8_e4m3fn).view(n, k), sf.view(n // 128, k // 128)


def fp8_per_tensor(torch, a, b):
    """cuBLASLt with one fp32 scale per operand, for a torch without block scales. These operands are quantised
    here from the BF16 ones, so they are not the other libraries' bytes: the entry carries its own reference."""
    def cast(x):
        scale = (x.abs().amax().float().clamp(min=1e-4) / _FP8_MAX).reshape(())
        return (x.float() / scale).to(torch.float8_e4m3fn), scale
    (a8, sa), (b8, sb) = cast(a), cast(b)
    reference = (a8.float().double() * sa.double()) @ (b8.float().double() * sb.double()).t()

    def call():
        return torch._scaled_mm(a8, b8.t(), sa, sb, out_dtype=torch.bfloat16)
    try:
        call()
    except Exception as e:
        lines = str(e).strip().splitlines()
        return unsupported(f'{type(e).__name__}: {lines[0] if lines else ""}', label=PER_TENSOR_LABEL)
    return Entry(fn=call, reference=reference, label=PER_TENSOR_LABEL)
