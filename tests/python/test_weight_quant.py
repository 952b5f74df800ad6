"""deep_gemm.weight_quant on the CPU: pack -> unpack round trips of every format (group sizes, zero points, bf16 and
fp16, ragged N and K), the packed bytes against an encoder of wq_params.hpp's table written here, GPTQ / AWQ imports
against int32 words encoded here, reference() against a direct sum, every bad argument named, gemm() / dequantize()
without a GPU (arguments checked first, then a RuntimeError), and the module kept out of deep_gemm's top level.
MoE experts: stack() / expert() round trips, the grouped weight's fields, the grouped GEMMs' bad arguments named (by
this module, then by the library before the missing GPU is reported), grouped plans on a preset and the grouped
references against a direct sum.
"""
import dataclasses
import math
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch', reason='deep_gemm.weight_quant takes torch tensors')

import deep_gemm  # noqa: E402
import deep_gemm.weight_quant as wq  # noqa: E402
from conftest import FakeTensor, gpu_available, raises  # noqa: E402

BF16, FP16 = torch.bfloat16, torch.float16
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]


def random_scales(rows, cols, dtype):
    """Finite, non-zero scales of both signs and varied magnitudes."""
    s = torch.randn(rows, cols, dtype=torch.float64) * torch.exp2(torch.randint(-6, 3, (rows, cols)).double())
    return torch.where(s == 0, torch.ones_like(s), s).to(dtype)


def bits(t):
    return t.contiguous().view(torch.int16)


def ceil_to(v, m):
    return -(-v // m) * m


def int4_case(n, k, group, with_zeros, dtype, q_dtype=torch.int64):
    q = torch.randint(0, 16, (n, k)).to(q_dtype)
    s = random_scales(n, k // group, dtype)
    z = torch.randint(0, 16, (n, k // group)) if with_zeros else None
    return q, s, z


def mxfp4_case(n, k):
    blocks = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8)
    exponents = torch.randint(0, 255, (n, -(-k // 32)), dtype=torch.uint8)
    return blocks, exponents


def nibbles(blocks):
    """[N, B] bytes -> [N, 2B] codes, the low nibble first (the even k)."""
    out = torch.empty(blocks.shape[0], 2 * blocks.shape[1], dtype=torch.uint8)
    out[:, 0::2], out[:, 1::2] = blocks & 0xF, blocks >> 4
    return out


# --- round trips -----------------------------------------------------------------------------------------------------


# (N, K, group): ragged N (24, 40, 1, 200) and K that is not a multiple of 64 (96) or of a 256-k stage.
INT4_SHAPES = [(n, k, group) for n, k in [(24, 96), (40, 384), (1, 128), (16, 640), (200, 256)]
               for group in (32, 64, 128) if k % group == 0]


@pytest.mark.parametrize('dtype', [BF16, FP16])
@pytest.mark.parametrize('with_zeros', [False, True])
@pytest.mark.parametrize('n,k,group', INT4_SHAPES)
def test_int4_round_trip(n, k, group, with_zeros, dtype):
    q_dtype = [torch.uint8, torch.int32, torch.int64, torch.int8][(n + k + group) % 4]
    q, s, z = int4_case(n, k, group, with_zeros, dtype, q_dtype)
    w = wq.pack_int4(q, s, z)
    n_pad, k_pad = ceil_to(n, 16), ceil_to(k, max(64, group))
    assert (w.format, w.act_dtype, w.n, w.k, w.group_size, w.has_zeros, w.exp_shift) == \
        ('int4', dtype, n, k, group, with_zeros, 0)
    assert (w.n_pad, w.k_pad) == (n_pad, k_pad)
    assert w.device == torch.device('cpu')
    assert tuple(w.data.shape) == (n_pad // 16, k_pad // 64, 512) and w.data.dtype == torch.uint8
    assert tuple(w.scales.shape) == (n_pad // 16, k_pad // group, 16) and w.scales.dtype == dtype
    assert (w.zeros is not None) == with_zeros and w.channel_scales is None
    assert w.nbytes == n_pad * k_pad // 2 + n_pad * (k_pad // group) * (3 if with_zeros else 2)
    u = wq.unpack(w)
    assert sorted(u) == sorted(['codes', 'scales'] + (['zeros'] if with_zeros else []))
    assert u['codes'].dtype == torch.uint8 and torch.equal(u['codes'].long(), q.long())
    assert u['scales'].dtype == dtype and torch.equal(bits(u['scales']), bits(s))
    if with_zeros:
        assert torch.equal(u['zeros'].long(), z)


@pytest.mark.parametrize('dtype', [BF16, FP16])
@pytest.mark.parametrize('n,k', [(24, 96), (40, 72), (17, 1000), (64, 64)])
def test_int8_round_trip(n, k, dtype):
    q = torch.randint(-128, 128, (n, k), dtype=torch.int8)
    q[0, :2] = torch.tensor([-128, 127], dtype=torch.int8)
    s = torch.randn(n) * 0.01
    w = wq.pack_int8(q, s, act_dtype=dtype)
    assert (w.format, w.act_dtype, w.group_size, w.has_zeros, w.exp_shift) == ('int8', dtype, 0, False, 0)
    assert tuple(w.data.shape) == (ceil_to(n, 16) // 16, ceil_to(k, 64) // 64, 1024)
    assert w.scales is None and w.zeros is None and tuple(w.channel_scales.shape) == (ceil_to(n, 16), )
    assert torch.equal(w.channel_scales[n:], torch.zeros(ceil_to(n, 16) - n))
    u = wq.unpack(w)
    assert sorted(u) == ['channel_scales', 'codes']
    assert torch.equal((u['codes'].to(torch.int16) - 128).to(torch.int8), q)
    assert torch.equal(u['channel_scales'], s)


@pytest.mark.parametrize('n,k', [(24, 72), (40, 96), (16, 64), (33, 8)])
def test_mxfp4_round_trip(n, k):
    blocks, exponents = mxfp4_case(n, k)
    exponents = exponents.clamp(max=199)
    exponents[-1, -1] = 200  # exp_shift = 200 - 128
    w = wq.pack_mxfp4(blocks, exponents)
    assert (w.format, w.act_dtype, w.k, w.group_size, w.exp_shift) == ('mxfp4', BF16, k, 32, 72)
    assert tuple(w.scales.shape) == (ceil_to(n, 16) // 16, ceil_to(k, 64) // 32, 16)
    assert w.scales.dtype == torch.uint8 and w.zeros is None and w.channel_scales is None
    u = wq.unpack(w)
    assert sorted(u) == ['codes', 'exponents']
    assert torch.equal(u['codes'], nibbles(blocks)) and torch.equal(u['exponents'], exponents)
    # Exponents at most 128 need no shift.
    assert wq.pack_mxfp4(blocks, exponents.clamp(max=128)).exp_shift == 0


def test_mxfp4_takes_torch_fp4_and_e8m0_dtypes_and_gpt_oss_blocks():
    n, k = 24, 72
    blocks, exponents = mxfp4_case(n, k)
    want = wq.pack_mxfp4(blocks, exponents)
    if hasattr(torch, 'float4_e2m1fn_x2') and hasattr(torch, 'float8_e8m0fnu'):
        w = wq.pack_mxfp4(blocks.view(torch.float4_e2m1fn_x2), exponents.view(torch.float8_e8m0fnu))
        assert torch.equal(w.data, want.data) and torch.equal(w.scales, want.scales)
    # gpt-oss: [N, K / 32, 16] bytes, the last group padded with zero codes; k says where K ends.
    padded = torch.zeros(n, 3 * 16, dtype=torch.uint8)
    padded[:, :k // 2] = blocks
    w = wq.pack_mxfp4(padded.view(n, 3, 16), exponents, k=k)
    assert w.k == k and torch.equal(w.data, want.data) and torch.equal(w.scales, want.scales)
    padded[3, 40] = 0x80  # -0 decodes to 0 too
    assert torch.equal(wq.pack_mxfp4(padded, exponents, k=k).data, want.data)
    padded[3, 41] = 0x10
    assert 'decode to 0' in raises(ValueError, 'blocks', wq.pack_mxfp4, padded, exponents, k=k)


def test_packing_keeps_the_input_device_and_to_moves_every_array():
    q, s, z = int4_case(24, 128, 64, True, BF16)
    w = wq.pack_int4(q, s, z)
    assert w.to('cpu').device == torch.device('cpu')
    meta = w.to('meta')
    assert meta.device.type == 'meta' and meta.n == 24
    assert all(t.device.type == 'meta' for t in (meta.data, meta.scales, meta.zeros))
    assert meta.nbytes == w.nbytes
    assert 'int4' in repr(w) and 'nbytes' in repr(w)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.n = 8


# --- the packed bytes, from wq_params.hpp's table ---------------------------------------------------------------------


def fragment_slot(r, c, k_pad, int8):
    """(byte, shift) of weight (r, c) in the packed codes, written from wq_params.hpp's description."""
    block = (r // 16) * (k_pad // 64) + c // 64
    rr, cc = r % 16, c % 64
    g, lower = rr % 8, rr // 8
    t = cc // 16
    k0 = 16 * t + 4 * ((cc % 16) // 4)  # the mma step s holds k0 .. k0 + 3
    s = (k0 - 16 * t) // 4
    lane = 4 * g + t
    if int8:
        # Plane s // 2; word 2(s % 2) holds (g, k0), (g, k0 + 1), (g + 8, k0), (g + 8, k0 + 1); word + 1 the same at
        # k0 + 2.
        word = 2 * (s % 2) + (cc - k0) // 2
        byte = (cc - k0) % 2 + 2 * lower
        return block * 1024 + (s // 2) * 512 + lane * 16 + 4 * word + byte, 0
    # Nibble j of word s: j = 0 (g, k0), 1 (g + 8, k0), 2 (g, k0 + 2), 3 (g + 8, k0 + 2), j + 4 the same at k + 1.
    j = {(0, 0): 0, (1, 0): 1, (0, 2): 2, (1, 2): 3, (0, 1): 4, (1, 1): 5, (0, 3): 6, (1, 3): 7}[(lower, cc - k0)]
    return block * 512 + lane * 16 + 4 * s + j // 2, 4 * (j % 2)


def encode(codes, n_pad, k_pad, int8):
    data = [128 if int8 else 0] * (n_pad * k_pad if int8 else n_pad * k_pad // 2)
    for r in range(codes.shape[0]):
        for c in range(codes.shape[1]):
            byte, shift = fragment_slot(r, c, k_pad, int8)
            v = int(codes[r, c])
            data[byte] = v if int8 else data[byte] | v << shift
    return torch.tensor(data, dtype=torch.uint8)


def group_table(values, n_pad, groups):
    """[N, G] entries -> the [n_pad / 16, groups, 16] table (zero padding)."""
    out = torch.zeros(n_pad, groups, dtype=values.dtype)
    out[:values.shape[0], :values.shape[1]] = values
    return out.view(n_pad // 16, 16, groups).transpose(1, 2).contiguous()


def test_packed_bytes_follow_the_fragment_table():
    n, k = 24, 96  # ragged: n_pad 32, k_pad 128
    q, s, z = int4_case(n, k, 32, True, BF16)
    w = wq.pack_int4(q, s, z)
    assert torch.equal(w.data.flatten(), encode(q, 32, 128, int8=False))
    assert torch.equal(bits(w.scales), bits(group_table(s, 32, 4)))
    assert torch.equal(w.zeros, group_table(z.to(torch.uint8), 32, 4))

    q8 = torch.randint(-128, 128, (n, k), dtype=torch.int8)
    w = wq.pack_int8(q8, torch.rand(n) + 0.5)
    assert torch.equal(w.data.flatten(), encode(q8.to(torch.int16) + 128, 32, 128, int8=True))

    blocks, exponents = mxfp4_case(n, 72)
    w = wq.pack_mxfp4(blocks, exponents)
    assert torch.equal(w.data.flatten(), encode(nibbles(blocks), 32, 128, int8=False))
    assert torch.equal(w.scales, group_table(exponents, 32, 4))


# --- GPTQ and AWQ --------------------------------------------------------------------------------------------------------


def to_int32(words):
    """int64 words of 32 bits -> int32 (two's complement)."""
    return ((words + 2**31) % 2**32 - 2**31).to(torch.int32)


def pack_along_k(codes_kn):
    """[K, N] nibbles -> [K / 8, N] words, k % 8 in nibble k % 8 (GPTQ's qweight)."""
    words = torch.zeros(codes_kn.shape[0] // 8, codes_kn.shape[1], dtype=torch.int64)
    for i in range(8):
        words |= codes_kn[i::8].long() << (4 * i)
    return to_int32(words)


def pack_along_n(codes_rn, order=range(8)):
    """[R, N] nibbles -> [R, N / 8] words, nibble i holding column 8c + order[i] (GPTQ: in order; AWQ: its order)."""
    words = torch.zeros(codes_rn.shape[0], codes_rn.shape[1] // 8, dtype=torch.int64)
    for i, col in enumerate(order):
        words |= codes_rn[:, col::8].long() << (4 * i)
    return to_int32(words)


@pytest.mark.parametrize('dtype', [BF16, FP16])
@pytest.mark.parametrize('minus_one', [True, False])
@pytest.mark.parametrize('n,k,group', [(24, 128, 32), (64, 256, 128), (40, 192, 64)])
def test_from_gptq_against_words_encoded_here(n, k, group, minus_one, dtype):
    q = torch.randint(0, 16, (n, k))
    z = torch.randint(1 if minus_one else 0, 16, (n, k // group))
    s = random_scales(n, k // group, dtype)
    qweight = pack_along_k(q.T)
    qzeros = pack_along_n(z.T - int(minus_one))
    g_idx = torch.arange(k, dtype=torch.int32) // group
    w = wq.from_gptq(qweight, qzeros, s.T.contiguous(), group, g_idx=g_idx, zeros_minus_one=minus_one)
    assert (w.format, w.n, w.k, w.group_size, w.has_zeros, w.act_dtype) == ('int4', n, k, group, True, dtype)
    u = wq.unpack(w)
    assert torch.equal(u['codes'].long(), q) and torch.equal(u['zeros'].long(), z)
    assert torch.equal(bits(u['scales']), bits(s))
    # The same weight as pack_int4 makes it.
    assert torch.equal(w.data, wq.pack_int4(q, s, z).data)


@pytest.mark.parametrize('n,k,group', [(24, 128, 32), (64, 256, 128), (16, 64, 64)])
def test_from_awq_against_words_encoded_here(n, k, group):
    q = torch.randint(0, 16, (n, k))
    z = torch.randint(0, 16, (n, k // group))
    s = random_scales(n, k // group, FP16)
    qweight = pack_along_n(q.T, AWQ_ORDER)
    qzeros = pack_along_n(z.T, AWQ_ORDER)
    w = wq.from_awq(qweight, qzeros, s.T.contiguous(), group)
    assert (w.n, w.k, w.group_size, w.has_zeros, w.act_dtype) == (n, k, group, True, FP16)
    u = wq.unpack(w)
    assert torch.equal(u['codes'].long(), q) and torch.equal(u['zeros'].long(), z)
    assert torch.equal(bits(u['scales']), bits(s))


@pytest.mark.parametrize('k,group', [(256, 128), (96, 32), (192, 64)])
def test_per_channel_int4_is_packed_as_repeated_groups(k, group):
    # A checkpoint's per-channel int4 (group_size -1): one scale and zero point per row, packed as groups of the
    # largest kernel size dividing K, each holding the row's values; the weight itself is unchanged.
    n = 24
    q = torch.randint(0, 16, (n, k))
    z = torch.randint(1, 16, (n, 1))
    s = random_scales(n, 1, BF16)
    w = wq.pack_int4(q, s, z)
    assert (w.group_size, w.has_zeros) == (group, True)
    want = (q.double() - z.double()) * s.double()
    assert torch.equal(wq.reference_weight(w), want)
    u = wq.unpack(w)
    assert torch.equal(u['zeros'].long(), z.repeat_interleave(k // group, dim=1))
    # GPTQ (qzeros [1, N / 8], scales [1, N], g_idx all zeros) and AWQ give the same packed weight.
    g = wq.from_gptq(pack_along_k(q.T), pack_along_n(z.T - 1), s.T.contiguous(), -1,
                     g_idx=torch.zeros(k, dtype=torch.int32))
    a = wq.from_awq(pack_along_n(q.T, AWQ_ORDER), pack_along_n(z.T, AWQ_ORDER), s.T.contiguous(), -1)
    for other in (g, a):
        assert other.group_size == group and torch.equal(other.data, w.data)
        assert torch.equal(other.zeros, w.zeros) and torch.equal(bits(other.scales), bits(w.scales))


def test_per_channel_int4_needs_k_a_multiple_of_32():
    q = torch.randint(0, 16, (16, 40))
    with pytest.raises(ValueError, match=r'^scales: expected K a multiple of 32'):
        wq.pack_int4(q, random_scales(16, 1, BF16))
    with pytest.raises(ValueError, match=r'^qweight: expected K a multiple of 32'):
        wq.from_gptq(pack_along_k(torch.randint(0, 16, (40, 16))), torch.zeros(1, 2, dtype=torch.int32),
                     random_scales(1, 16, BF16), -1)
    with pytest.raises(ValueError, match=r'^g_idx: expected arange'):  # per channel: g_idx must be all zeros
        wq.from_gptq(pack_along_k(torch.randint(0, 16, (64, 16))), torch.zeros(1, 2, dtype=torch.int32),
                     random_scales(1, 16, BF16), -1, g_idx=torch.arange(64, dtype=torch.int32) // 32)


def test_awq_order_is_not_gptq_order():
    # One code at column 1: AWQ keeps it in nibble 4, so reading the word in GPTQ's order would put it at column 4.
    n, k, group = 8, 64, 64
    q = torch.zeros(n, k, dtype=torch.int64)
    q[1, 0] = 9
    z = torch.full((n, 1), 8)
    s = torch.ones(1, n, dtype=FP16)
    qweight = pack_along_n(q.T, AWQ_ORDER)
    assert int(qweight[0, 0]) == 9 << 16
    u = wq.unpack(wq.from_awq(qweight, pack_along_n(z.T, AWQ_ORDER), s, group))
    assert int(u['codes'][1, 0]) == 9 and int(u['codes'].sum()) == 9


# --- reference() ---------------------------------------------------------------------------------------------------------


def direct_weight(fmt, inputs, n, k):
    """W[r][c] from the formats' definitions, one Python float at a time."""
    out = [[0.0] * k for _ in range(n)]
    for r in range(n):
        for c in range(k):
            if fmt == 'int4':
                q, s, z, group = inputs
                zero = 8 if z is None else int(z[r, c // group])
                out[r][c] = (int(q[r, c]) - zero) * float(s[r, c // group])
            elif fmt == 'int8':
                q, s = inputs
                out[r][c] = int(q[r, c]) * float(s[r])
            else:
                blocks, exponents = inputs
                byte = int(blocks[r, c // 2])
                code = byte & 0xF if c % 2 == 0 else byte >> 4
                value = (-1.0 if code & 8 else 1.0) * E2M1[code & 7]
                out[r][c] = math.ldexp(value, int(exponents[r, c // 32]) - 127)
    return out


@pytest.mark.parametrize('fmt', ['int4', 'int4-zeros', 'int4-fp16', 'int8', 'mxfp4'])
def test_reference_against_a_direct_sum(fmt):
    m, n = 3, 20
    if fmt.startswith('int4'):
        k, group = 128, 64
        dtype = FP16 if fmt == 'int4-fp16' else BF16
        q, s, z = int4_case(n, k, group, fmt == 'int4-zeros', dtype)
        w, inputs = wq.pack_int4(q, s, z), (q, s, z, group)
    elif fmt == 'int8':
        k, dtype = 40, BF16
        q, s = torch.randint(-128, 128, (n, k), dtype=torch.int8), torch.randn(n)
        w, inputs = wq.pack_int8(q, s), (q, s)
    else:
        k, dtype = 72, BF16
        blocks, exponents = mxfp4_case(n, k)
        exponents = exponents % 20 + 117
        w, inputs = wq.pack_mxfp4(blocks, exponents), (blocks, exponents)
    weights = direct_weight(fmt.split('-')[0], inputs, n, k)
    assert wq.reference_weight(w).tolist() == weights  # exact: each weight is a float64
    a = torch.randn(m, k).to(dtype)
    got = wq.reference(a, w)
    assert got.dtype == torch.float64 and tuple(got.shape) == (m, n)
    for i in range(m):
        for j in range(n):
            terms = [float(a[i, c]) * weights[j][c] for c in range(k)]
            assert abs(got[i, j].item() - math.fsum(terms)) <= 1e-14 * math.fsum(map(abs, terms))


# --- bad arguments ------------------------------------------------------------------------------------------------------


def test_pack_int4_names_bad_arguments():
    q, s, z = int4_case(24, 128, 32, True, BF16)
    raises(TypeError, 'q', wq.pack_int4, q.tolist(), s)
    raises(ValueError, 'q', wq.pack_int4, q.float(), s)
    raises(ValueError, 'q', wq.pack_int4, q.flatten(), s)
    raises(ValueError, 'q', wq.pack_int4, q[:0], s[:0])
    raises(ValueError, 'q', wq.pack_int4, FakeTensor((2**31, 128), 'uint8', 'cpu'), s)
    bad = q.clone()
    bad[3, 5] = 16
    assert '16 at (3, 5)' in raises(ValueError, 'q', wq.pack_int4, bad, s)
    bad[3, 5] = -1
    raises(ValueError, 'q', wq.pack_int4, bad.to(torch.int32), s)
    raises(TypeError, 'scales', wq.pack_int4, q, None)
    raises(ValueError, 'scales', wq.pack_int4, q, s.float())
    raises(ValueError, 'scales', wq.pack_int4, q, s[:20])
    assert 'group size 48' in raises(ValueError, 'scales', wq.pack_int4, q[:, :96], s[:, :2])
    assert 'group size 256' in raises(ValueError, 'scales', wq.pack_int4, torch.randint(0, 16, (24, 512)), s[:, :2])
    inf = s.clone()
    inf[2, 1] = float('inf')
    assert 'finite' in raises(ValueError, 'scales', wq.pack_int4, q, inf)
    raises(ValueError, 'zeros', wq.pack_int4, q, s, z[:, :2])
    raises(ValueError, 'zeros', wq.pack_int4, q, s, z.float())
    raises(ValueError, 'zeros', wq.pack_int4, q, s, z + 1)


def test_pack_int8_names_bad_arguments():
    q, s = torch.randint(-128, 128, (24, 64), dtype=torch.int8), torch.randn(24)
    raises(ValueError, 'q', wq.pack_int8, q.to(torch.uint8), s)
    raises(ValueError, 'q', wq.pack_int8, q.to(torch.int32), s)
    assert 'multiple of 8' in raises(ValueError, 'q', wq.pack_int8, q[:, :12], s)
    raises(ValueError, 'scales', wq.pack_int8, q, s.to(BF16))
    raises(ValueError, 'scales', wq.pack_int8, q, s[:, None])
    nan = s.clone()
    nan[4] = float('nan')
    assert 'finite' in raises(ValueError, 'scales', wq.pack_int8, q, nan)
    raises(ValueError, 'act_dtype', wq.pack_int8, q, s, act_dtype=torch.float32)
    raises(TypeError, 'act_dtype', wq.pack_int8, q, s, act_dtype='bf16')


def test_pack_mxfp4_names_bad_arguments():
    blocks, exponents = mxfp4_case(24, 96)
    raises(ValueError, 'blocks', wq.pack_mxfp4, blocks.to(torch.int8), exponents)
    raises(ValueError, 'blocks', wq.pack_mxfp4, blocks[0], exponents)
    raises(ValueError, 'exponents', wq.pack_mxfp4, blocks, exponents[:, :2])
    raises(ValueError, 'exponents', wq.pack_mxfp4, blocks, exponents.float())
    bad = exponents.clone()
    bad[1, 1] = 255
    assert 'NaN' in raises(ValueError, 'exponents', wq.pack_mxfp4, blocks, bad)
    assert 'bfloat16' in raises(ValueError, 'act_dtype', wq.pack_mxfp4, blocks, exponents, act_dtype=FP16)
    raises(ValueError, 'k', wq.pack_mxfp4, blocks, exponents, k=100)
    raises(TypeError, 'k', wq.pack_mxfp4, blocks, exponents, k=96.0)
    # K = 2 * 35 = 70 is not a multiple of 8: the library's check, named after blocks (k was not given).
    assert 'multiple of 8' in raises(ValueError, 'blocks', wq.pack_mxfp4, blocks[:, :35].contiguous(),
                                     exponents[:, :3])


def test_from_gptq_names_bad_arguments():
    n, k, group = 24, 128, 32
    q, z, s = torch.randint(0, 16, (n, k)), torch.randint(1, 16, (n, k // group)), random_scales(n, k // group, FP16)
    args = [pack_along_k(q.T), pack_along_n(z.T - 1), s.T.contiguous()]
    assert '48' in raises(ValueError, 'group_size', wq.from_gptq, *args, 48)
    raises(ValueError, 'qzeros', wq.from_gptq, *args, -1)  # per channel: one row of zero points, not 4
    raises(TypeError, 'group_size', wq.from_gptq, *args, 32.0)
    raises(ValueError, 'qweight', wq.from_gptq, args[0].long(), *args[1:], group)
    raises(ValueError, 'qweight', wq.from_gptq, args[0][:, :12], *args[1:], group)
    raises(ValueError, 'qweight', wq.from_gptq, args[0][:3], *args[1:], group)  # K = 24: not a multiple of 32
    raises(ValueError, 'qzeros', wq.from_gptq, args[0], args[1][:, :2], args[2], group)
    raises(ValueError, 'qzeros', wq.from_gptq, args[0], args[1].float(), args[2], group)
    raises(ValueError, 'scales', wq.from_gptq, *args[:2], args[2].float(), group)
    raises(ValueError, 'scales', wq.from_gptq, *args[:2], args[2].T.contiguous(), group)
    act_order = torch.arange(k)[torch.randperm(k)] // group
    assert 'act-order' in raises(ValueError, 'g_idx', wq.from_gptq, *args, group, g_idx=act_order)
    raises(ValueError, 'g_idx', wq.from_gptq, *args, group, g_idx=torch.arange(k // 2) // group)
    raises(TypeError, 'zeros_minus_one', wq.from_gptq, *args, group, zeros_minus_one=1)
    # A stored 15 means zero point 16 under GPTQ v1's minus-one convention.
    stored = pack_along_n(torch.full((k // group, n), 15))
    raises(ValueError, 'qzeros', wq.from_gptq, args[0], stored, args[2], group)
    assert wq.from_gptq(args[0], stored, args[2], group, zeros_minus_one=False).has_zeros


def test_from_awq_names_bad_arguments():
    n, k, group = 16, 128, 64
    args = [torch.zeros(k, n // 8, dtype=torch.int32), torch.zeros(k // group, n // 8, dtype=torch.int32),
            torch.ones(k // group, n, dtype=BF16)]
    assert wq.from_awq(*args, group).n == n
    raises(ValueError, 'group_size', wq.from_awq, *args, 16)
    raises(ValueError, 'qweight', wq.from_awq, args[0].t(), *args[1:], group)
    raises(ValueError, 'qweight', wq.from_awq, args[0][:96], *args[1:], group)
    raises(ValueError, 'qzeros', wq.from_awq, args[0], args[1][:1], args[2], group)
    raises(ValueError, 'scales', wq.from_awq, *args[:2], args[2][:, :8], group)
    raises(TypeError, 'scales', wq.from_awq, *args[:2], None, group)


def test_packed_weight_fields_are_checked():
    q, s, z = int4_case(24, 128, 32, True, BF16)
    w = wq.pack_int4(q, s, z)
    raises(ValueError, 'format', dataclasses.replace, w, format='int3')
    raises(ValueError, 'n_pad', dataclasses.replace, w, n_pad=48)
    raises(ValueError, 'group_size', dataclasses.replace, w, group_size=48)
    raises(TypeError, 'n', dataclasses.replace, w, n=24.0)
    raises(ValueError, 'exp_shift', dataclasses.replace, w, exp_shift=3)
    raises(TypeError, 'has_zeros', dataclasses.replace, w, has_zeros=1)
    raises(ValueError, 'data', dataclasses.replace, w, data=w.data.to(torch.int8))
    raises(ValueError, 'data', dataclasses.replace, w, data=w.data[:1])
    assert dataclasses.replace(w, data=w.data.flatten()).data.dim() == 1  # the flat bytes are taken too
    raises(ValueError, 'scales', dataclasses.replace, w, scales=None)
    raises(ValueError, 'scales', dataclasses.replace, w, scales=w.scales.half())
    raises(ValueError, 'zeros', dataclasses.replace, w, has_zeros=False)
    raises(ValueError, 'channel_scales', dataclasses.replace, w, channel_scales=torch.zeros(32))
    raises(ValueError, 'scales', dataclasses.replace, w, scales=w.scales.transpose(1, 2).contiguous().transpose(1, 2))
    raises(ValueError, 'act_dtype', dataclasses.replace, w, act_dtype=torch.float32)
    fake = FakeTensor(tuple(w.scales.shape), 'bfloat16', 'cuda')
    assert "data's device" in raises(ValueError, 'scales', dataclasses.replace, w, scales=fake)
    mx = wq.pack_mxfp4(*mxfp4_case(16, 64))
    raises(ValueError, 'act_dtype', dataclasses.replace, mx, act_dtype=FP16, scales=mx.scales)
    raises(TypeError, 'w', wq.unpack, {'data': w.data})
    # A weight whose exp_shift is below its exponents' is refused when read; a larger one (a grouped weight's, which
    # its experts keep) gives the same values.
    assert mx.exp_shift > 0
    lower = dataclasses.replace(mx, exp_shift=mx.exp_shift - 1)
    assert 'at least' in raises(ValueError, 'w.exp_shift', wq.unpack, lower)
    wider = wq.unpack(dataclasses.replace(mx, exp_shift=mx.exp_shift + 1))
    assert all(torch.equal(wider[name], t) for name, t in wq.unpack(mx).items())


# --- the GPU calls without a GPU ---------------------------------------------------------------------------------------


def fake_cuda(w, ptr=0x7F0000000000):
    """``w`` with every array a stand-in CUDA tensor of the same shape and dtype (never dereferenced)."""
    fakes = {}
    for i, name in enumerate(('data', 'scales', 'zeros', 'channel_scales')):
        t = getattr(w, name)
        if t is not None:
            fakes[name] = FakeTensor(tuple(t.shape), str(t.dtype).replace('torch.', ''), 'cuda', ptr=ptr + i * 2**24)
    return dataclasses.replace(w, **fakes)


def weights():
    q, s, z = int4_case(24, 128, 64, True, BF16)
    return {
        'int4': wq.pack_int4(q, s, z),
        'int8': wq.pack_int8(torch.randint(-128, 128, (24, 128), dtype=torch.int8), torch.rand(24), FP16),
        'mxfp4': wq.pack_mxfp4(*mxfp4_case(24, 128)),
    }


def test_gpu_calls_name_bad_arguments_before_anything_runs():
    w = weights()['int4']
    a = torch.randn(4, 128, dtype=BF16)
    raises(TypeError, 'w', wq.gemm, a, 'w')
    raises(TypeError, 'a', wq.gemm, None, w)
    assert 'CUDA' in raises(ValueError, 'a', wq.gemm, a, w)
    raises(ValueError, 'a', wq.gemm, a.half(), w)
    raises(ValueError, 'a', wq.gemm, a[0], w)
    fw = fake_cuda(w)
    fa = FakeTensor((4, 128), 'bfloat16', 'cuda')
    assert 'cuda:0' in raises(ValueError, 'w', wq.gemm, fa, w)  # the weight is still on the CPU
    assert 'cuda:1' in raises(ValueError, 'w', wq.gemm, FakeTensor((4, 128), 'bfloat16', 'cuda', index=1), fw)
    raises(ValueError, 'out', wq.gemm, fa, fw, out=FakeTensor((4, 24), 'int32', 'cuda'))
    raises(ValueError, 'out', wq.gemm, fa, fw, out=FakeTensor((4, 24), 'float32', 'cuda', index=1))
    raises(ValueError, 'out', wq.gemm, fa, fw, out=torch.empty(4, 24))
    mx = fake_cuda(weights()['mxfp4'])
    assert 'bfloat16' in raises(ValueError, 'a', wq.gemm, FakeTensor((4, 128), 'float16', 'cuda'), mx)
    raises(TypeError, 'w', wq.dequantize, None)
    assert 'CUDA' in raises(ValueError, 'w', wq.dequantize, w)
    raises(ValueError, 'out', wq.dequantize, fw, out=FakeTensor((24, 128), 'float16', 'cuda'))


@pytest.mark.skipif(gpu_available(), reason='the library checks shapes only after a GPU run would start')
@pytest.mark.parametrize('fmt', ['int4', 'int8', 'mxfp4'])
def test_without_a_gpu_the_library_checks_then_says_so(fmt):
    w = fake_cuda(weights()[fmt])
    act = str(w.act_dtype).replace('torch.', '')
    a, out = FakeTensor((4, 128), act, 'cuda'), FakeTensor((4, 24), 'float32', 'cuda')
    # The library's checks, named after this module's arguments.
    assert 'K as the weight' in raises(ValueError, 'a', wq.gemm, FakeTensor((4, 96), act, 'cuda'), w, out=out)
    assert '16-byte' in raises(ValueError, 'a', wq.gemm, FakeTensor((4, 128), act, 'cuda', ptr=0x7F0000000002), w,
                               out=out)
    raises(ValueError, 'out', wq.gemm, a, w, out=FakeTensor((4, 16), 'float32', 'cuda'))
    raises(ValueError, 'out', wq.gemm, a, w, out=FakeTensor((4, 24), 'float32', 'cuda', strides=(1, 4)))
    raises(ValueError, 'out', wq.dequantize, w, out=FakeTensor((24, 96), act, 'cuda'))
    raises(ValueError, 'w.data', wq.gemm, a, dataclasses.replace(w, data=FakeTensor(tuple(w.data.shape), 'uint8',
                                                                                      'cuda', ptr=0x7F0000000008)),
           out=out)
    # Then the missing GPU.
    with pytest.raises(RuntimeError, match='GPU'):
        wq.gemm(a, w, out=out)
    with pytest.raises(RuntimeError, match='GPU'):
        wq.dequantize(w, out=FakeTensor((24, 128), act, 'cuda'))
    # No tokens: nothing to run, with or without a GPU.
    empty = FakeTensor((0, 24), 'float32', 'cuda')
    assert wq.gemm(FakeTensor((0, 128), act, 'cuda'), w, out=empty) is empty


def test_plan_on_a_preset():
    w = weights()['int4']
    line, fused = wq.plan(1, w, hw='h100-sxm')
    assert line.startswith('wq_gemm m=1 n=24 k=128 int4 g64 zeros bf16 -> fused') and fused
    line, fused = wq.plan(4096, wq.pack_int4(*int4_case(4096, 4096, 128, False, FP16)), out_dtype=torch.float32,
                          hw='h200')
    assert 'int4 g128 fp16' in line and fused  # no dense fp16 GEMM: fp16 activations always decode in registers
    assert wq.plan(64, weights()['mxfp4'], hw='h20')[0].startswith('wq_gemm m=64 n=24 k=128 mxfp4 bf16')
    raises(ValueError, 'm', wq.plan, 0, w, hw='h100-sxm')
    raises(TypeError, 'm', wq.plan, 1.0, w, hw='h100-sxm')
    raises(ValueError, 'hw', wq.plan, 1, w, hw='a100')
    raises(ValueError, 'hw', wq.plan, 1, w, hw='ascend-950dt')
    raises(TypeError, 'hw', wq.plan, 1, w, hw=8)
    raises(ValueError, 'out_dtype', wq.plan, 1, w, out_dtype=torch.int8, hw='h100-sxm')
    raises(TypeError, 'out_dtype', wq.plan, 1, w, out_dtype='bf16', hw='h100-sxm')
    raises(TypeError, 'w', wq.plan, 1, None, hw='h100-sxm')


def test_plan_follows_set_num_sms():
    w = wq.pack_int4(*int4_case(1024, 4096, 128, False, BF16))
    before = deep_gemm._C.num_sms_setting()
    try:
        deep_gemm._C.set_num_sms_setting(0)
        every = wq.plan(16, w, hw='h100-sxm')[0]
        deep_gemm._C.set_num_sms_setting(8)
        few = wq.plan(16, w, hw='h100-sxm')[0]
    finally:
        deep_gemm._C.set_num_sms_setting(before)
    assert every != few


@pytest.mark.skipif(gpu_available(), reason='checks the no-GPU message')
def test_plan_without_a_preset_needs_a_gpu():
    with pytest.raises(RuntimeError, match='GPU'):
        wq.plan(1, weights()['int8'])


# --- MoE experts: stack() and expert() --------------------------------------------------------------------------------


def expert_weights(fmt, count=3, n=24, k=128):
    """``count`` single weights of one layout; mxfp4's with exponent shifts 0, 5 and 72 (then 0, 5, 72...)."""
    out = []
    for e in range(count):
        if fmt == 'int4':
            out.append(wq.pack_int4(*int4_case(n, k, 64, True, BF16)))
        elif fmt == 'int8':
            out.append(wq.pack_int8(torch.randint(-128, 128, (n, k), dtype=torch.int8), torch.rand(n) + 0.5, FP16))
        else:
            blocks, exponents = mxfp4_case(n, k)
            exponents = exponents % 100 + 29  # at most 128: shift 0
            exponents[e % n, 0] = (128, 133, 200)[e % 3]
            out.append(wq.pack_mxfp4(blocks, exponents))
    return out


ARRAYS = ('data', 'scales', 'zeros', 'channel_scales')


@pytest.mark.parametrize('fmt', ['int4', 'int8', 'mxfp4'])
def test_stack_then_expert_gives_back_each_weight(fmt):
    ws = expert_weights(fmt)
    g = wq.stack(ws)
    assert g.num_experts == 3 and all(w.num_experts == 1 for w in ws)
    assert (g.format, g.act_dtype, g.n, g.k, g.group_size, g.has_zeros, g.n_pad, g.k_pad) == \
        (ws[0].format, ws[0].act_dtype, ws[0].n, ws[0].k, ws[0].group_size, ws[0].has_zeros, ws[0].n_pad, ws[0].k_pad)
    assert g.exp_shift == max(w.exp_shift for w in ws)
    if fmt == 'mxfp4':
        assert [w.exp_shift for w in ws] == [0, 5, 72] and g.exp_shift == 72
    for name in ARRAYS:
        t = getattr(g, name)
        if getattr(ws[0], name) is None:
            assert t is None
            continue
        assert tuple(t.shape) == (3, ) + tuple(getattr(ws[0], name).shape) and t.dtype == getattr(ws[0], name).dtype
    assert g.nbytes == sum(w.nbytes for w in ws)
    assert 'num_experts=3' in repr(g) and 'num_experts' not in repr(ws[0])
    for i, w in enumerate(ws):
        e = g.expert(i)
        assert e.num_experts == 1 and e.exp_shift == g.exp_shift
        for name in ARRAYS:
            if getattr(w, name) is not None:
                assert torch.equal(getattr(e, name), getattr(w, name)), (i, name)
        assert e.data.data_ptr() == g.data[i].data_ptr()  # a view, not a copy
        # The group's (larger) exponent shift reads back the same codes and the same float64 weight.
        assert all(torch.equal(t, wq.unpack(w)[name]) for name, t in wq.unpack(e).items())
        assert torch.equal(wq.reference_weight(e), wq.reference_weight(w))
    # to() moves every expert; a single weight is its own expert 0; stacking one weight gives it back.
    meta = g.to('meta')
    assert meta.num_experts == 3 and meta.device.type == 'meta' and meta.nbytes == g.nbytes
    assert meta.expert(2).data.device.type == 'meta'
    assert ws[0].expert(0) is ws[0] and wq.stack([ws[1]]) is ws[1] and wq.stack(tuple(ws)).num_experts == 3
    # Flat data (a weight's bytes 1-D) stacks to the same blocks; a grouped weight takes [E, bytes] data too.
    flat = wq.stack([dataclasses.replace(w, data=w.data.flatten()) for w in ws])
    assert torch.equal(flat.data, g.data)
    assert dataclasses.replace(g, data=g.data.reshape(3, -1)).data.dim() == 2
    # A stack of stacked experts is the same grouped weight.
    again = wq.stack([g.expert(i) for i in range(3)])
    assert all(getattr(again, name) is None or torch.equal(getattr(again, name), getattr(g, name)) for name in ARRAYS)
    raises(ValueError, 'i', g.expert, 3)
    raises(ValueError, 'i', g.expert, -1)
    raises(TypeError, 'i', g.expert, 1.0)


def test_stack_names_bad_weights():
    ws = expert_weights('int4', 2)
    raises(ValueError, 'weights', wq.stack, [])
    raises(TypeError, 'weights', wq.stack, ws[0])
    raises(TypeError, 'weights', wq.stack, iter(ws))
    raises(TypeError, 'weights[1]', wq.stack, [ws[0], ws[1].data])
    raises(TypeError, 'weights[0]', wq.stack, [None, ws[1]])
    grouped = wq.stack(ws)
    assert 'grouped' in raises(ValueError, 'weights[1]', wq.stack, [ws[0], grouped])
    others = {
        'format': wq.pack_mxfp4(*mxfp4_case(24, 128)),
        'act_dtype': wq.pack_int4(*int4_case(24, 128, 64, True, FP16)),
        'n': wq.pack_int4(*int4_case(40, 128, 64, True, BF16)),
        'k': wq.pack_int4(*int4_case(24, 192, 64, True, BF16)),
        'group_size': wq.pack_int4(*int4_case(24, 128, 32, True, BF16)),
        'has_zeros': wq.pack_int4(*int4_case(24, 128, 64, False, BF16)),
    }
    for field, other in others.items():
        message = raises(ValueError, 'weights[2]', wq.stack, [ws[0], ws[1], other])
        assert f'expected {field} ' in message, message
    assert 'device' in raises(ValueError, 'weights[1]', wq.stack, [ws[0], ws[1].to('meta')])
    # int8 and mxfp4 never match each other's layout either.
    i8, mx = expert_weights('int8', 1)[0], expert_weights('mxfp4', 1)[0]
    assert 'format' in raises(ValueError, 'weights[1]', wq.stack, [i8, mx])


def test_grouped_weight_fields_are_checked():
    g = wq.stack(expert_weights('int4'))
    raises(TypeError, 'num_experts', dataclasses.replace, g, num_experts=3.0)
    raises(ValueError, 'num_experts', dataclasses.replace, g, num_experts=0)
    assert '3 experts' in raises(ValueError, 'data', dataclasses.replace, g, num_experts=3, data=g.data[0])
    assert '(2, ' in raises(ValueError, 'data', dataclasses.replace, g, num_experts=2)
    raises(ValueError, 'data', dataclasses.replace, g, num_experts=1)  # arrays with an [E] dimension need E > 1
    raises(ValueError, 'scales', dataclasses.replace, g, scales=g.scales[:2])
    raises(ValueError, 'zeros', dataclasses.replace, g, zeros=g.zeros[0])
    raises(ValueError, 'data', dataclasses.replace, g, data=g.data.reshape(-1))  # [E, ...] only
    w = expert_weights('int4', 1)[0]
    raises(ValueError, 'data', dataclasses.replace, w, num_experts=3)
    i8 = wq.stack(expert_weights('int8'))
    assert tuple(i8.channel_scales.shape) == (3, 32)
    raises(ValueError, 'channel_scales', dataclasses.replace, i8, channel_scales=i8.channel_scales[0])
    raises(ValueError, 'scales', dataclasses.replace, g, scales=g.scales.transpose(0, 1).contiguous().transpose(0, 1))
    # Built directly: every array with its [E] dimension.
    built = wq.PackedWeight(g.format, g.act_dtype, g.n, g.k, g.group_size, g.has_zeros, g.exp_shift, g.n_pad, g.k_pad,
                            g.data, g.scales, g.zeros, None, 3)
    assert built.num_experts == 3 and torch.equal(built.expert(2).data, g.expert(2).data)


def test_single_weight_calls_refuse_a_grouped_weight():
    g = fake_cuda(wq.stack(expert_weights('int4')))
    fa = FakeTensor((4, 128), 'bfloat16', 'cuda')
    assert 'w.expert(i)' in raises(ValueError, 'w', wq.gemm, fa, g, out=FakeTensor((4, 24), 'float32', 'cuda'))
    assert 'm_grouped_gemm_masked' in raises(ValueError, 'w', wq.gemm, fa, g)
    assert 'w.expert(i)' in raises(ValueError, 'w', wq.dequantize, g)
    cpu = wq.stack(expert_weights('int4'))
    assert 'w.expert(i)' in raises(ValueError, 'w', wq.unpack, cpu)
    raises(ValueError, 'w', wq.reference_weight, cpu)
    assert 'reference_grouped' in raises(ValueError, 'w', wq.reference, torch.randn(2, 128), cpu)
    assert 'grouping' in raises(ValueError, 'grouping', wq.plan, 1, cpu, hw='h100-sxm')


# --- MoE experts: the grouped GEMMs without a GPU ------------------------------------------------------------------------


def grouped(fmt, count=3):
    """A grouped weight of ``count`` experts [24, 128] with stand-in CUDA arrays, and its activations' dtype name."""
    w = fake_cuda(wq.stack(expert_weights(fmt, count)))
    return w, str(w.act_dtype).replace('torch.', '')


def test_grouped_calls_name_bad_arguments_before_anything_runs():
    w, act = grouped('int4')
    i32 = 'int32'
    a, layout, out = FakeTensor((256, 128), act, 'cuda'), FakeTensor((256, ), i32, 'cuda'), \
        FakeTensor((256, 24), 'float32', 'cuda')
    contiguous = wq.m_grouped_gemm_contiguous
    raises(TypeError, 'w', contiguous, a, None, layout, out=out)
    raises(TypeError, 'a', contiguous, None, w, layout, out=out)
    assert 'CUDA' in raises(ValueError, 'a', contiguous, torch.randn(256, 128, dtype=BF16), w, layout, out=out)
    assert "act_dtype" in raises(ValueError, 'a', contiguous, FakeTensor((256, 128), 'float16', 'cuda'), w, layout)
    assert '2-D' in raises(ValueError, 'a', contiguous, FakeTensor((3, 256, 128), act, 'cuda'), w, layout)
    cpu_w = wq.stack(expert_weights('int4'))
    assert 'cuda:0' in raises(ValueError, 'w', contiguous, a, cpu_w, layout, out=out)
    raises(TypeError, 'grouped_layout', contiguous, a, w, None, out=out)
    assert 'int32' in raises(ValueError, 'grouped_layout', contiguous, a, w, FakeTensor((256, ), 'int64', 'cuda'))
    raises(ValueError, 'grouped_layout', contiguous, a, w, torch.zeros(256, dtype=torch.int32), out=out)
    raises(ValueError, 'grouped_layout', contiguous, a, w, FakeTensor((256, ), i32, 'cuda', index=1), out=out)
    raises(ValueError, 'out', contiguous, a, w, layout, out=FakeTensor((256, 24), 'int32', 'cuda'))
    raises(ValueError, 'out', contiguous, a, w, layout, out=FakeTensor((256, 24), 'float32', 'cuda', index=1))
    raises(TypeError, 'out', contiguous, a, w, layout, out=[0.0])

    a3, counts, out3 = FakeTensor((3, 16, 128), act, 'cuda'), FakeTensor((3, ), i32, 'cuda'), \
        FakeTensor((3, 16, 24), 'bfloat16', 'cuda')
    masked = wq.m_grouped_gemm_masked
    raises(TypeError, 'w', masked, a3, 'w', counts, 16, out=out3)
    assert '3-D' in raises(ValueError, 'a', masked, a, w, counts, 16, out=out3)
    # a's expert count against the weight's: named after the weight.
    message = raises(ValueError, 'w', masked, FakeTensor((4, 16, 128), act, 'cuda'), w, counts, 16, out=out3)
    assert '4 experts' in message and 'num_experts 3' in message
    assert 'int32' in raises(ValueError, 'masked_m', masked, a3, w, FakeTensor((3, ), 'int64', 'cuda'), 16, out=out3)
    raises(ValueError, 'masked_m', masked, a3, w, torch.zeros(3, dtype=torch.int32), 16, out=out3)
    raises(TypeError, 'masked_m', masked, a3, w, [16, 16, 16], 16, out=out3)
    raises(ValueError, 'expected_m', masked, a3, w, counts, 0, out=out3)
    raises(ValueError, 'expected_m', masked, a3, w, counts, 2**31, out=out3)
    raises(TypeError, 'expected_m', masked, a3, w, counts, 16.0, out=out3)
    raises(TypeError, 'expected_m', masked, a3, w, counts, None, out=out3)
    raises(ValueError, 'out', masked, a3, w, counts, 16, out=FakeTensor((3, 16, 24), 'int8', 'cuda'))


@pytest.mark.skipif(gpu_available(), reason='the library checks shapes only after a GPU run would start')
@pytest.mark.parametrize('fmt', ['int4', 'int8', 'mxfp4'])
def test_without_a_gpu_the_library_checks_grouped_calls_then_says_so(fmt):
    w, act = grouped(fmt)
    align = deep_gemm.get_mk_alignment_for_contiguous_layout()
    m = 2 * align
    a, layout, out = FakeTensor((m, 128), act, 'cuda'), FakeTensor((m, ), 'int32', 'cuda'), \
        FakeTensor((m, 24), 'float32', 'cuda')
    contiguous = wq.m_grouped_gemm_contiguous
    # The library's checks, named after this module's arguments: M off the alignment is a's.
    message = raises(ValueError, 'a', contiguous, FakeTensor((m - 64, 128), act, 'cuda'), w,
                     FakeTensor((m - 64, ), 'int32', 'cuda'), out=FakeTensor((m - 64, 24), 'float32', 'cuda'))
    assert f'multiple of the group alignment {align}' in message
    assert 'K as the weight' in raises(ValueError, 'a', contiguous, FakeTensor((m, 96), act, 'cuda'), w, layout,
                                       out=out)
    raises(ValueError, 'grouped_layout', contiguous, a, w, FakeTensor((m - 1, ), 'int32', 'cuda'), out=out)
    raises(ValueError, 'grouped_layout', contiguous, a, w, FakeTensor((m, 1), 'int32', 'cuda'), out=out)
    raises(ValueError, 'grouped_layout', contiguous, a, w, FakeTensor((m, ), 'int32', 'cuda', strides=(2, )), out=out)
    raises(ValueError, 'out', contiguous, a, w, layout, out=FakeTensor((m, 16), 'float32', 'cuda'))
    raises(ValueError, 'out', contiguous, a, w, layout, out=FakeTensor((3, m, 24), 'float32', 'cuda'))
    raises(ValueError, 'w.data', contiguous, a,
           dataclasses.replace(w, data=FakeTensor(tuple(w.data.shape), 'uint8', 'cuda', ptr=0x7F0000000008)), layout,
           out=out)

    a3, counts, out3 = FakeTensor((3, 40, 128), act, 'cuda'), FakeTensor((3, ), 'int32', 'cuda'), \
        FakeTensor((3, 40, 24), act, 'cuda')
    masked = wq.m_grouped_gemm_masked
    raises(ValueError, 'masked_m', masked, a3, w, FakeTensor((2, ), 'int32', 'cuda'), 16, out=out3)
    raises(ValueError, 'masked_m', masked, a3, w, FakeTensor((3, ), 'int32', 'cuda', strides=(2, )), 16, out=out3)
    raises(ValueError, 'out', masked, a3, w, counts, 16, out=FakeTensor((3, 32, 24), act, 'cuda'))
    raises(ValueError, 'out', masked, a3, w, counts, 16, out=FakeTensor((40, 24), act, 'cuda'))
    raises(ValueError, 'out', masked, a3, w, counts, 16,
           out=FakeTensor((3, 40, 24), act, 'cuda', strides=(24, 24, 1)))  # the experts' slices overlap
    assert 'K as the weight' in raises(ValueError, 'a', masked, FakeTensor((3, 40, 64), act, 'cuda'), w, counts, 16,
                                       out=out3)
    # Then the missing GPU.
    with pytest.raises(RuntimeError, match='GPU'):
        contiguous(a, w, layout, out=out)
    with pytest.raises(RuntimeError, match='GPU'):
        masked(a3, w, counts, 16, out=out3)
    # No rows: nothing to run, with or without a GPU.
    empty = FakeTensor((0, 24), 'float32', 'cuda')
    assert contiguous(FakeTensor((0, 128), act, 'cuda'), w, FakeTensor((0, ), 'int32', 'cuda'), out=empty) is empty
    empty3 = FakeTensor((3, 0, 24), act, 'cuda')
    assert masked(FakeTensor((3, 0, 128), act, 'cuda'), w, counts, 16, out=empty3) is empty3


def test_grouped_plans_on_a_preset():
    ws = [wq.pack_int4(*int4_case(256, 512, 128, False, BF16)) for _ in range(8)]
    g = wq.stack(ws)
    # Masked: one row of CTAs per expert, so the line's grid is the weight's 4 row blocks of 64 times the expert
    # count; the packed bytes are every expert's.
    line, fused = wq.plan(16, g, hw='h100-sxm', grouping='masked')
    assert line.startswith('wq_gemm m=16 n=256 k=512 int4 g128 bf16 -> fused block_m=16 ') and fused
    assert ' splits=1 k_groups=1 grid=4x8 ' in line and 'dequantise+dense n/a' in line  # 4 row blocks x 8 experts
    pair = wq.stack(ws[:2])
    two, _ = wq.plan(16, pair, hw='h100-sxm', grouping='masked')
    assert ' grid=4x2 ' in two
    assert packed_mb(line) == pytest.approx(g.nbytes / 1e6, abs=0.006)
    assert packed_mb(two) == pytest.approx(pair.nbytes / 1e6, abs=0.006)
    assert ' block_m=8 ' in wq.plan(1, g, hw='h100-sxm', grouping='masked')[0]
    # Contiguous: m is every expert's rows; token blocks of about m / experts rows, each a pass over one expert.
    line, fused = wq.plan(1024, g, hw='h100-sxm', grouping='contiguous')
    assert ' block_m=64 ' in line and ' splits=1 k_groups=1 grid=64 ' in line and fused  # 16 token blocks x 4 row blocks
    assert ' block_m=16 ' in wq.plan(128, g, hw='h100-sxm', grouping='contiguous')[0]
    # Grouped plans never split K nor dequantise, where the single weight's plan does.
    w = wq.pack_int4(*int4_case(1024, 4096, 128, False, BF16))
    dense = wq.plan(1, w, hw='h100-sxm')[0]
    assert ' splits=1 ' not in dense
    one = wq.plan(1, w, hw='h100-sxm', grouping='masked')[0]
    assert ' splits=1 k_groups=1 grid=16 ' in one and 'dequantise+dense n/a' in one
    raises(ValueError, 'grouping', wq.plan, 16, g, hw='h100-sxm', grouping='ragged')
    raises(TypeError, 'grouping', wq.plan, 16, g, hw='h100-sxm', grouping=1)
    raises(ValueError, 'grouping', wq.plan, 16, g, hw='h100-sxm')


def packed_mb(line):
    return float(line.split('packed ')[1].split(' MB')[0])


# --- MoE experts: the float64 references ----------------------------------------------------------------------------------


def direct_expert_weights(fmt, count, n, k):
    """``count`` packed weights and their W[r][c] from the formats' definitions (direct_weight)."""
    packed, direct = [], []
    for e in range(count):
        if fmt == 'int4':
            q, s, z = int4_case(n, k, 32, True, BF16)
            packed.append(wq.pack_int4(q, s, z))
            direct.append(direct_weight('int4', (q, s, z, 32), n, k))
        elif fmt == 'int8':
            q, s = torch.randint(-128, 128, (n, k), dtype=torch.int8), torch.randn(n)
            packed.append(wq.pack_int8(q, s))
            direct.append(direct_weight('int8', (q, s), n, k))
        else:
            blocks, exponents = mxfp4_case(n, k)
            exponents = exponents % 20 + 117 + 8 * e
            exponents[0, 0] = 136 + 8 * e  # exponent shifts 8, 16 and 24
            packed.append(wq.pack_mxfp4(blocks, exponents))
            direct.append(direct_weight('mxfp4', (blocks, exponents), n, k))
    return wq.stack(packed), direct


def assert_row(got, a_row, weights, label):
    """got [N] against a_row @ weights.T, term by term."""
    for j, w_row in enumerate(weights):
        terms = [float(a_row[c]) * w_row[c] for c in range(len(w_row))]
        assert abs(got[j].item() - math.fsum(terms)) <= 1e-14 * math.fsum(map(abs, terms)), (label, j)


@pytest.mark.parametrize('fmt', ['int4', 'int8', 'mxfp4'])
def test_grouped_references_against_a_direct_sum(fmt):
    n, k = 20, 64
    g, direct = direct_expert_weights(fmt, 3, n, k)
    if fmt == 'mxfp4':
        assert g.exp_shift == 24 and g.expert(0).exp_shift == 24
    layout = torch.tensor([1, 1, -1, 0, 2, 2, 2, -1], dtype=torch.int32)
    a = torch.randn(len(layout), k).to(BF16)
    got = wq.reference_grouped_contiguous(a, g, layout)
    assert got.dtype == torch.float64 and tuple(got.shape) == (len(layout), n) and got.device.type == 'cpu'
    for r, e in enumerate(layout.tolist()):
        if e < 0:
            assert bool(got[r].isnan().all())
        else:
            assert_row(got[r], a[r], direct[e], f'contiguous row {r}')

    counts = torch.tensor([0, 4, 2], dtype=torch.int32)
    a3 = torch.randn(3, 4, k).to(BF16)
    got = wq.reference_grouped_masked(a3, g, counts)
    assert got.dtype == torch.float64 and tuple(got.shape) == (3, 4, n)
    for e in range(3):
        for i in range(4):
            if i >= counts[e]:
                assert bool(got[e, i].isnan().all())
            else:
                assert_row(got[e, i], a3[e, i], direct[e], f'masked expert {e} row {i}')


def test_grouped_references_name_bad_arguments():
    g = wq.stack(expert_weights('int4'))
    a, layout = torch.randn(4, 128), torch.tensor([0, 1, 2, -1], dtype=torch.int32)
    ref = wq.reference_grouped_contiguous
    raises(TypeError, 'w', ref, a, None, layout)
    raises(ValueError, 'a', ref, a[:, :64], g, layout)
    raises(ValueError, 'a', ref, a.to(torch.int32), g, layout)
    raises(ValueError, 'a', ref, a[None], g, layout)
    assert '3 at 1' in raises(ValueError, 'grouped_layout', ref, a, g, torch.tensor([0, 3, 2, -1]))
    raises(ValueError, 'grouped_layout', ref, a, g, torch.tensor([0, -2, 2, -1]))
    raises(ValueError, 'grouped_layout', ref, a, g, layout[:3])
    raises(ValueError, 'grouped_layout', ref, a, g, layout.float())
    raises(TypeError, 'grouped_layout', ref, a, g, [0, 1, 2, -1])
    # A single weight is a group of one.
    single = g.expert(1)
    got = ref(a, single, torch.tensor([0, 0, -1, 0]))
    assert torch.equal(got[[0, 1, 3]], wq.reference(a, single)[[0, 1, 3]]) and bool(got[2].isnan().all())

    a3, counts = torch.randn(3, 5, 128), torch.tensor([5, 0, 2])
    ref = wq.reference_grouped_masked
    assert 'num_experts 3' in raises(ValueError, 'w', ref, a3[:2], g, counts[:2])
    raises(ValueError, 'a', ref, a3[0], g, counts)
    raises(ValueError, 'a', ref, a3[:, :, :64], g, counts)
    assert 'in 0..5' in raises(ValueError, 'masked_m', ref, a3, g, torch.tensor([6, 0, 2]))
    raises(ValueError, 'masked_m', ref, a3, g, torch.tensor([5, -1, 2]))
    raises(ValueError, 'masked_m', ref, a3, g, counts[:2])
    raises(ValueError, 'masked_m', ref, a3, g, counts.double())


# --- the module stays out of deep_gemm's top level ----------------------------------------------------------------------


def test_import_deep_gemm_does_not_import_weight_quant():
    code = ('import sys, deep_gemm; before = set(dir(deep_gemm)); '
            'print("deep_gemm.weight_quant" in sys.modules, "torch" in sys.modules); '
            'import deep_gemm.weight_quant; print(sorted(set(dir(deep_gemm)) - before))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env={**os.environ, 'CUDA_VISIBLE_DEVICES': ''})
    assert out.stdout.split('\n')[:2] == ['False False', "['weight_quant']"]


def test_module_surface():
    assert set(wq.__all__) == {name for name in vars(wq) if not name.startswith('_') and
                               getattr(vars(wq)[name], '__module__', None) == wq.__name__}
    assert not hasattr(deep_gemm, 'pack_int4') and not hasattr(deep_gemm, 'PackedWeight')
