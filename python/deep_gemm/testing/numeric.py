"""DeepGEMM's similarity measure and byte counter."""


def calc_diff(x, y):
    """1 - 2·Σxy / Σ(x² + y²) in float64: 0 for identical tensors, ~1e-5 for a good BF16 GEMM. A 0-D tensor."""
    x, y = x.double(), y.double()
    denominator = (x * x + y * y).sum()
    return 1 - 2 * (x * y).sum() / denominator


def count_bytes(*tensors):
    """Bytes held by the given tensors; tuples/lists (such as (tensor, scale) pairs) are walked, None skipped."""
    total = 0
    for t in tensors:
        if isinstance(t, (tuple, list)):
            total += count_bytes(*t)
        elif t is not None:
            total += t.numel() * t.element_size()
    return total
