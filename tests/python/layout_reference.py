"""Torch references of DeepGEMM's scaling-factor layouts, written from its layout contract (DeepGEMM's
tests/test_layout.py builds the same tensors): dense padded tensors filled with plain torch ops, whose views
carry exactly the shapes and strides DeepGEMM's helpers return. Shared by the CPU and GPU layout tests.
"""
import torch


def ceil_div(x, y):
    return (x + y - 1) // y


def tma_aligned(mn):
    return ceil_div(mn, 4) * 4


def mn_major_reference(sf):
    """fp32 [(G,) mn, kb] → the same values with strides ([kb * A,] 1, A), A = mn rounded up to 4."""
    batched = sf if sf.dim() == 3 else sf.unsqueeze(0)
    groups, mn, kb = batched.shape
    storage = torch.zeros((groups, kb, tma_aligned(mn)), dtype=sf.dtype, device=sf.device)
    out = storage.transpose(1, 2)[:, :mn, :]
    out.copy_(batched)
    return out if sf.dim() == 3 else out.squeeze(0)


def ue8m0_words(exponents):
    """int32 words packing four exponent bytes along the last dimension (byte b = element 4p + b, missing ones 0)."""
    k = exponents.shape[-1]
    padded = torch.zeros(exponents.shape[:-1] + (ceil_div(k, 4) * 4, ), dtype=torch.uint8, device=exponents.device)
    padded[..., :k] = exponents
    return padded.view(torch.int32)  # little-endian: byte b of each word is element 4p + b


def packed_reference(sf, row_mask=None):
    """fp32 [(G,) mn, kb] → int32 [(G,) mn, ceil(kb / 4)] with strides ([P * A,] 1, A), UE8M0 bytes of the fp32
    exponents; rows where row_mask is False pack to 0."""
    batched = sf if sf.dim() == 3 else sf.unsqueeze(0)
    groups, mn, kb = batched.shape
    exponents = (batched.contiguous().view(torch.int32) >> 23).to(torch.uint8)
    if row_mask is not None:
        exponents = exponents * row_mask.view(1, mn, 1).to(torch.uint8)
    words = ue8m0_words(exponents)  # [G, mn, P], row-major
    storage = torch.zeros((groups, words.shape[-1], tma_aligned(mn)), dtype=torch.int32, device=sf.device)
    out = storage.transpose(1, 2)[:, :mn, :]
    out.copy_(words)
    return out if sf.dim() == 3 else out.squeeze(0)


def psum_row_mask(ends, mn, alignment):
    """Rows of an M-grouped A in the prefix-sum layout: group g spans [align(ends[g - 1]), ends[g])."""
    start, mask = 0, torch.zeros(mn, dtype=torch.bool)
    for end in ends:
        mask[start:end] = True
        start = ceil_div(end, alignment) * alignment
    return mask


def k_grouped_reference(sf, group_ks, gran_k):
    """fp32 [sf_k, mn] (group g's ceil(k_g / gran_k) K-block rows one after another) → int32 [Σ packed rows, mn]:
    each group's rows packed four per word down the K-block axis."""
    blocks, row = [], 0
    for k in group_ks:
        rows = ceil_div(k, gran_k)
        group = sf[row:row + rows]
        row += rows
        exponents = (group.contiguous().view(torch.int32) >> 23).to(torch.uint8)
        blocks.append(ue8m0_words(exponents.T.contiguous()).T)  # [ceil(rows / 4), mn]
    return torch.cat(blocks)


def ue8m0_scales(shape, device='cpu', low=-40, high=20):
    """Random powers of two (valid UE8M0 scales)."""
    return torch.pow(2.0, torch.randint(low, high, shape, device=device).float())
