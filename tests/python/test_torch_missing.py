"""deep_gemm installs and imports without torch; a call given something other than a tensor says so, and, where
torch is not installed, that it is what the GEMMs need (CI runs this without torch, the GPU machine with it)."""
import pytest

import deep_gemm
from conftest import HAVE_TORCH


@pytest.mark.parametrize('call', [
    lambda: deep_gemm.bf16_gemm_nt([1.0], [1.0], [1.0]),
    lambda: deep_gemm.fp8_gemm_nt(([1], [1]), ([1], [1]), [1.0]),
    lambda: deep_gemm.get_mn_major_tma_aligned_tensor([1.0]),
])
def test_a_non_tensor_names_the_argument_and_whether_torch_is_missing(call):
    with pytest.raises(TypeError) as info:
        call()
    message = str(info.value)
    assert message.split(':')[0] in ('a', 'a[0]', 'sf'), message
    assert 'expected a torch.Tensor, got builtins.list' in message
    assert ('PyTorch is not installed' in message) == (not HAVE_TORCH), message
