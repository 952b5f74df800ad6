"""deep_gemm.utils' FP4 casts and UE8M0 helpers, and deep_gemm.testing's torch-only helpers, on CPU tensors (need
torch; skipped without it). Expected values are worked out by hand or by a brute-force nearest-value search; where
DeepGEMM 2.6.1's source is next to the repository (../shared/peers/deepgemm-2.6.1 or $DEEPGEMM_SRC), its
deep_gemm/utils/math.py is loaded as a reference and every cast must match it bit for bit."""
import importlib.util
import os
import pathlib

import pytest

torch = pytest.importorskip('torch', reason='the casts and the bitwise comparison need torch')

import deep_gemm  # noqa: E402
from deep_gemm.testing import assert_bitwise_equal, calc_diff  # noqa: E402
from deep_gemm.utils import (cast_back_from_fp4, pack_ue8m0_to_int, per_token_cast_to_fp4,  # noqa: E402
                             transpose_packed_fp4, unpack_ue8m0_from_int)

E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def byte(low, high):
    """The int8 value of a byte holding two 4-bit codes."""
    value = low | (high << 4)
    return value - 256 if value > 127 else value


def test_fp4_codes_round_to_nearest_with_ties_down_and_a_sign_bit():
    # amax 6 gives the scale 1, so each value is coded as it is.
    values = [0.0, 0.25, 0.26, 0.75, 0.76, 1.25, 1.3, 1.75, 1.8, 2.5, 2.6, 3.5, 3.6, 5.0, 5.1, 6.0, -0.25, -0.3,
              -6.0, 1.0]
    codes = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 0, 9, 15, 2]
    packed, sf = per_token_cast_to_fp4(torch.tensor([values]), use_ue8m0=False)
    assert packed.dtype == torch.int8 and packed.shape == (1, 10) and sf.shape == (1, 1)
    assert sf.item() == 1.0
    assert packed[0].tolist() == [byte(codes[i], codes[i + 1]) for i in range(0, 20, 2)]
    decoded = cast_back_from_fp4(packed, sf)
    assert decoded.dtype == torch.float32 and decoded.shape == (1, 20)
    assert decoded[0].tolist() == [0, 0, 0.5, 0.5, 1, 1, 1.5, 1.5, 2, 2, 3, 3, 4, 4, 6, 6, 0, -0.5, -6, 1]


def test_fp4_scales_per_row_and_group():
    x = torch.zeros(2, 160)
    x[0, 0], x[0, 130], x[1, 5] = 3.0, -12.0, 1e-6
    packed, sf = per_token_cast_to_fp4(x, use_ue8m0=False)
    # One scale per row and 128 columns: amax / 6, amax clamped to 1e-4.
    assert packed.shape == (2, 80) and sf.shape == (2, 2)
    assert sf.flatten().tolist() == pytest.approx([0.5, 2.0, 1e-4 / 6, 1e-4 / 6])
    assert packed[0, 0].item() == byte(7, 0) and packed[0, 65].item() == byte(15, 0)
    # UE8M0: each scale rounded up to a power of two; the floor 1e-4 / 6 (1.67e-5) becomes 2^-15 (3.05e-5).
    _, sf_ue8m0 = per_token_cast_to_fp4(x, use_ue8m0=True, gran_k=32)
    assert sf_ue8m0.tolist() == [[0.5, 2 ** -15, 2 ** -15, 2 ** -15, 2.0], [2 ** -15] * 5]


def nearest_e2m1(scaled):
    """The E2M1 value nearest each element (ties to the smaller magnitude, beyond 6 saturating), by search."""
    magnitudes = torch.tensor(E2M1)
    distance = (scaled.abs().unsqueeze(-1) - magnitudes).abs()
    # argmin returns the first minimum, i.e. the smaller magnitude on a tie.
    return torch.sign(scaled) * magnitudes[distance.argmin(-1)]


@pytest.mark.parametrize('gran_k,use_ue8m0', [(128, False), (32, True), (128, True)])
def test_fp4_round_trip_is_the_nearest_representable_value(gran_k, use_ue8m0):
    x = torch.randn(64, 320, dtype=torch.bfloat16) * 3
    packed, sf = per_token_cast_to_fp4(x, use_ue8m0=use_ue8m0, gran_k=gran_k)
    assert packed.shape == (64, 160) and sf.shape == (64, deep_gemm.ceil_div(320, gran_k))
    scale = sf.repeat_interleave(gran_k, dim=1)[:, :320]
    expected = nearest_e2m1(x.float() * (1.0 / scale)) * scale
    assert torch.equal(cast_back_from_fp4(packed, sf, gran_k=gran_k), expected)
    assert calc_diff(cast_back_from_fp4(packed, sf, gran_k=gran_k), x) < 0.02


def test_packed_ue8m0_scales_pad_to_four_with_ones():
    x = torch.randn(8, 64)
    packed, sf = per_token_cast_to_fp4(x, use_ue8m0=True, gran_k=32, use_packed_ue8m0=True)
    _, plain = per_token_cast_to_fp4(x, use_ue8m0=True, gran_k=32)
    assert sf.dtype == torch.int32 and sf.shape == (8, 1)
    unpacked = unpack_ue8m0_from_int(sf)
    assert unpacked.shape == (8, 4) and torch.equal(unpacked[:, :2], plain) and unpacked[:, 2:].eq(1.0).all()
    assert torch.equal(cast_back_from_fp4(packed, sf, gran_k=32, use_packed_ue8m0=True),
                       cast_back_from_fp4(packed, plain, gran_k=32))
    with pytest.raises(ValueError, match='^use_packed_ue8m0: expected False unless use_ue8m0'):
        per_token_cast_to_fp4(x, use_ue8m0=False, use_packed_ue8m0=True)


def test_fp4_cast_rejects_odd_widths_and_other_ranks():
    with pytest.raises(ValueError, match='^x: expected an even number of columns'):
        per_token_cast_to_fp4(torch.zeros(4, 33), use_ue8m0=False)
    with pytest.raises(ValueError, match='^x: expected a 2-D tensor'):
        per_token_cast_to_fp4(torch.zeros(4, 4, 4), use_ue8m0=False)


def test_negative_zero_code_decodes_to_positive_zero():
    decoded = cast_back_from_fp4(torch.tensor([[byte(8, 9)]], dtype=torch.int8), torch.ones(1, 1))
    assert decoded.tolist() == [[0.0, -0.5]] and not torch.signbit(decoded[0, 0])


def pack(codes):
    """uint8 codes [R, 2C] -> int8 [R, C], written out independently of deep_gemm's packing."""
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).view(torch.int8)


def test_transpose_packed_fp4_transposes_the_codes():
    codes = torch.randint(0, 16, (6, 10), dtype=torch.uint8)
    transposed = transpose_packed_fp4(pack(codes))
    assert transposed.dtype == torch.int8 and transposed.shape == (10, 3)
    assert torch.equal(transposed, pack(codes.t().contiguous()))
    assert torch.equal(transpose_packed_fp4(pack(codes.t().contiguous())), pack(codes))
    with pytest.raises(ValueError, match='^a: expected an even number of rows'):
        transpose_packed_fp4(pack(codes[:5]))
    with pytest.raises(ValueError, match='^a: expected a 2-D int8 tensor'):
        transpose_packed_fp4(codes)


def test_ue8m0_pack_and_unpack_are_inverse():
    sf = torch.tensor([[1.0, 2.0, 0.5, 2.0 ** -20, 2.0 ** 30, 1.0, 4.0, 8.0]])
    packed = pack_ue8m0_to_int(sf)
    assert packed.shape == (1, 2) and torch.equal(unpack_ue8m0_from_int(packed), sf)
    with pytest.raises(ValueError, match='^x: expected non-negative powers of two'):
        pack_ue8m0_to_int(torch.tensor([[1.0, -2.0, 1.0, 1.0]]))
    with pytest.raises(ValueError, match='^x: expected non-negative powers of two'):
        pack_ue8m0_to_int(torch.tensor([[1.0, 3.0, 1.0, 1.0]]))


def test_fp8_fp4_gemm_refuses_real_fp4_operands_before_touching_them():
    # CPU tensors: the FP4 check comes first, so no device is needed to see it.
    a = per_token_cast_to_fp4(torch.randn(128, 256), use_ue8m0=False)
    b = deep_gemm.per_token_cast_to_fp8(torch.randn(64, 256), use_ue8m0=False)
    d = torch.empty(128, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r'^a: expected float8_e4m3fn data .* got packed FP4 int8 \(128, 128\)$'):
        deep_gemm.fp8_fp4_gemm_nt(a, b, d)
    with pytest.raises(ValueError, match=r'^b: expected float8_e4m3fn data'):
        deep_gemm.m_grouped_fp8_fp4_gemm_nt_masked((b[0].view(1, 64, 256), b[1].view(1, 64, 2)),
                                                   (a[0].view(1, 128, 128), a[1].view(1, 128, 2)), d.view(1, 128, 64),
                                                   torch.zeros(1, dtype=torch.int32), 64)


def test_calc_diff_of_zero_tensors_is_zero():
    zeros = torch.zeros(16, 16, dtype=torch.bfloat16)
    assert calc_diff(zeros, zeros) == 0.0
    assert float(calc_diff(torch.ones(4), -torch.ones(4))) == pytest.approx(2.0)


def test_assert_bitwise_equal_locates_the_first_difference():
    x = torch.arange(12, dtype=torch.bfloat16).view(3, 4)
    assert_bitwise_equal(x, x.clone())
    y = x.clone()
    y[1, 2] = 7
    with pytest.raises(AssertionError) as info:
        assert_bitwise_equal(x, y, label='d')
    message = str(info.value)
    assert message.startswith('bitwise mismatch (d): num_bytes=24, num_mismatch=')
    assert 'elem=6, coord=(1, 2)' in message and 'x_val=6.0, y_val=7.0' in message
    # +0.0 and -0.0 compare equal but differ in their bits.
    with pytest.raises(AssertionError, match='coord=\\(0,\\)'):
        assert_bitwise_equal(torch.zeros(2), torch.tensor([-0.0, 0.0]))
    with pytest.raises(AssertionError):
        assert_bitwise_equal(x, x.float())
    with pytest.raises(AssertionError):
        assert_bitwise_equal(x, x.view(4, 3))


ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCE_PATHS = [pathlib.Path(p) / 'deep_gemm' / 'utils' / 'math.py'
                   for p in (os.environ.get('DEEPGEMM_SRC', ''), ROOT.parent / 'shared' / 'peers' / 'deepgemm-2.6.1')
                   if p]
REFERENCE = next((p for p in REFERENCE_PATHS if p.is_file()), None)


@pytest.fixture(scope='module')
def reference():
    if REFERENCE is None:
        pytest.skip('DeepGEMM 2.6.1 source not found (../shared/peers/deepgemm-2.6.1 or $DEEPGEMM_SRC): '
                    'no reference to compare the casts with bit for bit')
    # Its math.py imports only torch and typing, so it loads on its own, without DeepGEMM's extension.
    spec = importlib.util.spec_from_file_location('deepgemm_reference_math', REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def same(ours, theirs):
    ours, theirs = (ours, ) if torch.is_tensor(ours) else ours, (theirs, ) if torch.is_tensor(theirs) else theirs
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_bitwise_equal(a, b)


@pytest.mark.parametrize('gran_k', [32, 128])
@pytest.mark.parametrize('use_ue8m0', [False, True])
def test_casts_match_deepgemm_bit_for_bit(reference, gran_k, use_ue8m0):
    x = torch.randn(256, 384 + 64, dtype=torch.bfloat16) * 5
    x[3, :] = 0  # an all-zero row: the amax floor
    same(deep_gemm.per_token_cast_to_fp8(x, use_ue8m0, gran_k), reference.per_token_cast_to_fp8(x, use_ue8m0, gran_k))
    same(deep_gemm.per_channel_cast_to_fp8(x, use_ue8m0, gran_k),
         reference.per_channel_cast_to_fp8(x, use_ue8m0, gran_k))
    same(deep_gemm.per_block_cast_to_fp8(x[:200], use_ue8m0, gran_k),
         reference.per_block_cast_to_fp8(x[:200], use_ue8m0, gran_k))
    same(deep_gemm.per_custom_dims_cast_to_fp8(x.view(16, 16, -1), (0, 2), use_ue8m0),
         reference.per_custom_dims_cast_to_fp8(x.view(16, 16, -1), (0, 2), use_ue8m0))
    same(per_token_cast_to_fp4(x, use_ue8m0, gran_k), reference.per_token_cast_to_fp4(x, use_ue8m0, gran_k))
    packed, sf = per_token_cast_to_fp4(x, use_ue8m0, gran_k)
    same(cast_back_from_fp4(packed, sf, gran_k), reference.cast_back_from_fp4(packed, sf, gran_k))
    same(transpose_packed_fp4(packed), reference.transpose_packed_fp4(packed))
    same(deep_gemm.ceil_to_ue8m0(x.float()), reference.ceil_to_ue8m0(x.float()))
    if use_ue8m0:
        # Packing FP8 scales needs a multiple of 4 of them: 512 columns.
        wide = torch.randn(64, 512, dtype=torch.bfloat16)
        same(deep_gemm.per_token_cast_to_fp8(wide, True, gran_k, use_packed_ue8m0=True),
             reference.per_token_cast_to_fp8(wide, True, gran_k, use_packed_ue8m0=True))
        ours = per_token_cast_to_fp4(x, True, gran_k, use_packed_ue8m0=True)
        same(ours, reference.per_token_cast_to_fp4(x, True, gran_k, use_packed_ue8m0=True))
        same(unpack_ue8m0_from_int(ours[1]), reference.unpack_ue8m0_from_int(ours[1]))
        same(cast_back_from_fp4(*ours, gran_k, True), reference.cast_back_from_fp4(*ours, gran_k, True))
