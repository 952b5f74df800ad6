"""Ports of helpers from DeepGEMM 2.6.1's tests/test_attention.py, device-agnostic and torch passed in (so the
modules importing this still import without torch). Shared by the MQA logits tests and the peer bench's tests."""


def kv_cache_cast_to_fp8(torch, x):
    """DeepGEMM's kv_cache_cast_to_fp8: bf16 [blocks, block_size, 1, D] -> (the fused uint8 cache [blocks,
    block_size, 1, D + 4]: fp8 values then each token's fp32 scale, the dequantised values in float32)."""
    num_blocks, block_size, num_heads, head_dim = x.shape
    x_amax = x.abs().float().amax(dim=3, keepdim=True).clamp(1e-4)
    sf = x_amax / 448.0
    x_scaled = (x * (1.0 / sf)).to(torch.float8_e4m3fn)
    x_fp8 = torch.empty((num_blocks, block_size * (head_dim + 4)), device=x.device, dtype=torch.uint8)
    x_fp8[:, :block_size * head_dim] = x_scaled.view(num_blocks, block_size * head_dim).view(torch.uint8)
    x_fp8[:, block_size * head_dim:] = sf.view(num_blocks, block_size).view(torch.uint8)
    return x_fp8.view(num_blocks, block_size, num_heads, head_dim + 4), x_scaled.float() * sf
