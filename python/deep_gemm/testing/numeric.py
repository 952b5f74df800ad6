"""DeepGEMM's similarity measure, byte counter and bitwise comparison (torch is imported when needed)."""

__all__ = ['calc_diff', 'count_bytes', 'assert_bitwise_equal']


def calc_diff(x, y):
    """1 - 2·Σxy / Σ(x² + y²) in float64: 0 for identical tensors, ~1e-5 for a good BF16 GEMM. A 0-D tensor,
    or the float 0.0 when both are all zeros (the ratio is then undefined; DeepGEMM calls them equal)."""
    for value, name in ((x, 'x'), (y, 'y')):
        if not hasattr(value, 'double'):
            raise TypeError(f'{name}: expected a torch.Tensor, got {type(value).__name__} {value!r}')
    x, y = x.double(), y.double()
    denominator = (x * x + y * y).sum()
    if denominator == 0:
        return 0.0
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


def assert_bitwise_equal(x, y, label: str = ''):
    """Raises AssertionError unless x and y have the same shape, dtype and bytes; the message locates the first
    differing byte (flat byte index, element, coordinate) and shows both bytes and both values."""
    import torch
    assert x.shape == y.shape, f'shape mismatch{_suffix(label)}: {tuple(x.shape)} vs {tuple(y.shape)}'
    assert x.dtype == y.dtype, f'dtype mismatch{_suffix(label)}: {x.dtype} vs {y.dtype}'
    x_bytes = x.contiguous().view(torch.uint8)
    y_bytes = y.contiguous().view(torch.uint8)
    if torch.equal(x_bytes, y_bytes):
        return
    differs = (x_bytes != y_bytes).flatten()
    first = int(differs.nonzero()[0].item())
    size = x.element_size()
    element = first // size
    coord = tuple(int(c) for c in torch.unravel_index(torch.tensor(element), tuple(x.shape)))
    x_flat, y_flat = x.flatten(), y.flatten()
    raise AssertionError(
        f'bitwise mismatch{_suffix(label)}: num_bytes={differs.numel()}, num_mismatch={int(differs.sum().item())}, '
        f'first_byte={first}, elem={element}, coord={coord}, byte_in_elem={first % size}, '
        f'x_byte={int(x_bytes.flatten()[first].item())}, y_byte={int(y_bytes.flatten()[first].item())}, '
        f'x_val={x_flat[element].item()}, y_val={y_flat[element].item()}')


def _suffix(label):
    return f' ({label})' if label else ''
