"""deep_gemm.utils and deep_gemm.testing on CPU tensors (need torch; skipped without it)."""
import pytest

torch = pytest.importorskip('torch', reason='deep_gemm.utils casts and testing helpers need torch')

import deep_gemm  # noqa: E402
from deep_gemm.testing import calc_diff, count_bytes  # noqa: E402


def test_ceil_to_ue8m0_rounds_up_to_powers_of_two():
    x = torch.tensor([1.0, 1.5, 3.0, 0.3, -5.0])
    assert deep_gemm.ceil_to_ue8m0(x).tolist() == [1.0, 2.0, 4.0, 0.5, 8.0]


def test_pack_ue8m0_to_int_packs_exponents_lowest_first():
    packed = deep_gemm.pack_ue8m0_to_int(torch.tensor([[1.0, 2.0, 0.5, 4.0]]))
    assert packed.dtype == torch.int32 and packed.shape == (1, 1)
    assert int(packed[0, 0]) & 0xFF == 127 and (int(packed[0, 0]) >> 8) & 0xFF == 128


@pytest.mark.parametrize('cast,sf_shape', [(deep_gemm.per_token_cast_to_fp8, (256, 3)),
                                           (deep_gemm.per_block_cast_to_fp8, (2, 3))])
def test_fp8_casts_round_trip(cast, sf_shape):
    x = torch.randn(256, 300)
    x_fp8, sf = cast(x, use_ue8m0=True)
    assert x_fp8.dtype == torch.float8_e4m3fn and x_fp8.shape == x.shape and tuple(sf.shape) == sf_shape
    assert calc_diff(x, x_fp8.float() * (sf.repeat_interleave(128, -1)[:, :300] if sf.shape[0] == 256 else
                                        sf.repeat_interleave(128, 0).repeat_interleave(128, 1)[:256, :300])) < 1e-3


def test_calc_diff_and_count_bytes():
    x = torch.randn(64, 64)
    assert float(calc_diff(x, x)) == pytest.approx(0.0, abs=1e-12)
    assert count_bytes(x, (x.bfloat16(), None), [torch.zeros(3, dtype=torch.int32)]) == 64 * 64 * 6 + 12


def test_cpu_tensor_is_rejected_by_name():
    a = torch.zeros(4, 8, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match='^a: expected a CUDA tensor'):
        deep_gemm.bf16_gemm_nt(a, a, torch.zeros(4, 4, dtype=torch.bfloat16))
