"""deep_gemm._mqa_logits, the Python layer of DeepSeek-V3.2's MQA logits, exported at deep_gemm's top level.

CPU: DeepGEMM 2.6.1's signatures (hard-coded from csrc/apis/attention.hpp's pybind text, and checked against that
text where the source is next to the repository); every bad argument named before any C++ call (stand-in tensors,
or CPU torch tensors where torch's own objects are needed); the C++ layer's re-checks named in DeepGEMM's terms; the
layout helpers against DeepGEMM's allocation arithmetic; the module, and deep_gemm with it, imports without torch;
deep_gemm exports the five names and registers no torch op for them (DeepGEMM registers none either).
GPU (torch + a CUDA GPU, skipped otherwise): a compact mirror of DeepGEMM's test_mqa_logits and
test_paged_mqa_logits on three small cases each, with its references, its masks and its bars (calc_diff < 1e-3
against the unquantised reference, < 5e-6 (fp32 logits) or 3e-5 (bf16) against the quantised one) and a
bitwise self-consistency check of repeated calls.
"""
import inspect
import os
import subprocess
import sys

import pytest

import deep_gemm
from conftest import HAVE_TORCH, FakeTensor as T, f32, gpu_available, i32, raises
from deep_gemm import _C, _mqa_logits as mqa
from deepgemm_ports import kv_cache_cast_to_fp8

NAMES = ('fp8_fp4_mqa_logits', 'get_paged_mqa_logits_metadata', 'fp8_fp4_paged_mqa_logits', 'fp8_mqa_logits',
         'fp8_paged_mqa_logits')
R = inspect.Parameter.empty
F32 = 'torch.float32'  # DeepGEMM's default of logits_dtype (torch::kFloat32 in its pybind text)
# DeepGEMM 2.6.1, csrc/apis/attention.hpp, register_apis: py::arg names and defaults.
DEEPGEMM = {
    'fp8_fp4_mqa_logits': [('q', R), ('kv', R), ('weights', R), ('cu_seq_len_k_start', R), ('cu_seq_len_k_end', R),
                           ('clean_logits', True), ('max_seqlen_k', 0), ('logits_dtype', F32)],
    'get_paged_mqa_logits_metadata': [('context_lens', R), ('block_kv', R), ('num_sms', R), ('indices', None)],
    'fp8_fp4_paged_mqa_logits': [('q', R), ('kv_cache', R), ('weights', R), ('context_lens', R), ('block_table', R),
                                 ('schedule_meta', R), ('max_context_len', R), ('clean_logits', False),
                                 ('logits_dtype', F32), ('indices', None)],
    'fp8_mqa_logits': [('q', R), ('kv', R), ('weights', R), ('cu_seq_len_k_start', R), ('cu_seq_len_k_end', R),
                       ('clean_logits', True), ('max_seqlen_k', 0)],
    'fp8_paged_mqa_logits': [('q', R), ('kv_cache', R), ('weights', R), ('context_lens', R), ('block_table', R),
                             ('schedule_meta', R), ('max_context_len', R), ('clean_logits', False),
                             ('indices', None)],
}


def ours(name):
    params = inspect.signature(getattr(mqa, name)).parameters.values()
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    return [(p.name, F32 if p.default is mqa.FLOAT32 else p.default) for p in params]


@pytest.mark.parametrize('name', NAMES)
def test_signatures_are_deepgemms(name):
    assert ours(name) == DEEPGEMM[name]


def test_signatures_match_deepgemms_source():
    from test_dropin_surface import PEER, pybind_signatures
    if PEER is None:
        pytest.skip('DeepGEMM 2.6.1 source not found: the hard-coded table stands alone')
    bound, _ = pybind_signatures(PEER / 'csrc' / 'apis')
    for name in NAMES:
        assert [(n, d) for _, n, d in bound[name]] == DEEPGEMM[name], name


def test_the_logits_dtype_default_is_torch_float32():
    assert repr(mqa.FLOAT32) == 'torch.float32' and mqa.FLOAT32 == mqa.FLOAT32
    assert mqa.FLOAT32 != 'torch.float32' and mqa.FLOAT32 != T((1, ), 'float32').dtype  # only torch's own dtype
    if HAVE_TORCH:
        import torch
        assert mqa.FLOAT32 == torch.float32 and torch.float32 == mqa.FLOAT32 and torch.float == mqa.FLOAT32
        assert mqa.FLOAT32 != torch.bfloat16 and torch.bfloat16 != mqa.FLOAT32
        assert inspect.signature(mqa.fp8_fp4_mqa_logits).parameters['logits_dtype'].default == torch.float32


def test_deep_gemm_exports_them_without_torch_ops():
    from deep_gemm import _torch_ops
    registered = {name for names in _torch_ops._FAMILIES.values() for name in names}
    for name in NAMES:
        assert getattr(deep_gemm, name) is getattr(mqa, name), name
        assert name not in registered, name


# A fresh interpreter in which `import torch` fails (as where it is not installed): the module imports, and a call
# given no tensors names its argument.
NO_TORCH = """
import importlib.abc, importlib.machinery, sys
class NoTorch(importlib.abc.Loader):
    def create_module(self, spec):
        raise ImportError('torch is blocked by this test')
    def exec_module(self, module):
        pass
class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'torch':
            return importlib.machinery.ModuleSpec(name, NoTorch())
sys.meta_path.insert(0, Finder())
"""


def test_the_module_imports_without_torch():
    code = NO_TORCH + (
        'import deep_gemm, deep_gemm._mqa_logits as m\n'
        'print(repr(m.fp8_fp4_mqa_logits.__defaults__[-1]), "torch" in sys.modules)\n'
        'try:\n'
        '    m.get_paged_mqa_logits_metadata([1], 64, 132)\n'
        'except TypeError as e:\n'
        '    print(str(e).split(":")[0])\n')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env={**os.environ, 'CUDA_VISIBLE_DEVICES': ''})
    assert out.stdout.split() == ['torch.float32', 'False', 'context_lens'], out.stdout + out.stderr
    # And the package imports it (its exports) without importing torch.
    code = 'import sys, deep_gemm; print("deep_gemm._mqa_logits" in sys.modules, "torch" in sys.modules)'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env={**os.environ, 'CUDA_VISIBLE_DEVICES': ''})
    assert out.stdout.split() == ['True', 'False']


# ----------------------------------------------------------------------------------------------------------------
# Prefill: fp8_fp4_mqa_logits / fp8_mqa_logits. Stand-ins that pass every check reach the allocation, which needs
# torch's tensors: that TypeError (naming q) shows each case below failed on its own argument, before any C++ call.

def fp8(*shape, **kw):
    return T(shape, 'float8_e4m3fn', **kw)


def prefill(seq_len=64, seq_len_kv=256, heads=32, head_dim=128, **over):
    args = dict(q=(fp8(seq_len, heads, head_dim), None), kv=(fp8(seq_len_kv, head_dim), f32(seq_len_kv)),
                weights=f32(seq_len, heads), cu_seq_len_k_start=i32(seq_len), cu_seq_len_k_end=i32(seq_len))
    args.update(over)
    return args


def test_prefill_valid_stand_ins_reach_the_allocation():
    assert 'allocated with torch' in raises(TypeError, 'q', mqa.fp8_fp4_mqa_logits, **prefill())
    args = prefill(heads=64, head_dim=32)
    args['q'] = args['q'][0]
    raises(TypeError, 'q', mqa.fp8_mqa_logits, **args)
    raises(TypeError, 'q', mqa.fp8_fp4_mqa_logits, **prefill(), clean_logits=False, max_seqlen_k=100)


@pytest.mark.parametrize('argument,exc,over,words', [
    ('q', TypeError, dict(q=fp8(64, 32, 128)), 'pair'),
    ('q', TypeError, dict(q=(fp8(64, 32, 128), )), 'pair'),
    ('q', TypeError, dict(q=([1.0], None)), 'torch.Tensor'),
    ('q', ValueError, dict(q=(T((64, 32, 64), 'int8'), i32(64, 32))), 'SM90 has FP8 only'),
    ('q', ValueError, dict(q=(fp8(64, 32, 128), f32(64, 32))), 'SM90 has FP8 only'),
    ('q', ValueError, dict(q=(T((64, 32, 64), 'uint8'), None)), 'SM90 has FP8 only'),
    ('q', ValueError, dict(q=(fp8(64, 4096), None)), '3-D'),
    ('q', ValueError, dict(q=(T((64, 32, 128), 'bfloat16'), None)), 'float8_e4m3fn'),
    ('q', ValueError, dict(q=(fp8(64, 16, 128), None), weights=f32(64, 16)), '32 or 64 heads'),
    ('q', ValueError, dict(q=(fp8(64, 32, 256), None)), 'head dim'),
    ('q', ValueError, dict(q=(fp8(64, 32, 128, strides=(128, 64 * 128, 1)), None)), 'contiguous'),
    ('q', ValueError, dict(q=(fp8(64, 32, 128, ptr=0x7F0000000008), None)), '16-byte'),
    ('kv', TypeError, dict(kv=fp8(256, 128)), 'pair'),
    ('kv', ValueError, dict(kv=(T((256, 64), 'int8'), i32(256))), 'SM90 has FP8 only'),
    ('kv', ValueError, dict(kv=(T((256, 64), 'float4_e2m1fn_x2'), f32(256))), 'SM90 has FP8 only'),
    ('kv', ValueError, dict(kv=(fp8(256, 128), i32(256))), 'SM90 has FP8 only'),
    ('kv', ValueError, dict(kv=(fp8(256, 64), f32(256))), 'D as q'),
    ('kv', ValueError, dict(kv=(T((256, 128), 'bfloat16'), f32(256))), 'float8_e4m3fn'),
    ('kv', ValueError, dict(kv=(fp8(256, 128, strides=(256, 1)), f32(256))), 'contiguous'),
    ('kv', ValueError, dict(kv=(fp8(256, 128, ptr=0x7F0000000004), f32(256))), '16-byte'),
    ('kv[1]', TypeError, dict(kv=(fp8(256, 128), None)), 'torch.Tensor'),
    ('kv[1]', ValueError, dict(kv=(fp8(256, 128), f32(255))), 'one per kv token'),
    ('kv[1]', ValueError, dict(kv=(fp8(256, 128), f32(256, 1))), 'one per kv token'),
    ('kv[1]', ValueError, dict(kv=(fp8(256, 128), T((256, ), 'bfloat16'))), 'float32'),
    ('kv[1]', ValueError, dict(kv=(fp8(256, 128), f32(256, strides=(2, )))), 'contiguous'),
    ('kv[1]', ValueError, dict(kv=(fp8(256, 128), f32(256, ptr=0x7F0000000004))), '16-byte'),
    ('weights', TypeError, dict(weights=None), 'torch.Tensor'),
    ('weights', ValueError, dict(weights=f32(64, 64)), '[64, 32]'),
    ('weights', ValueError, dict(weights=f32(64 * 32)), '[64, 32]'),
    ('weights', ValueError, dict(weights=T((64, 32), 'bfloat16')), 'SM100'),
    ('weights', ValueError, dict(weights=T((64, 32), 'float16')), 'float32'),
    ('weights', ValueError, dict(weights=f32(64, 32, strides=(1, 64))), 'H contiguous'),
    ('cu_seq_len_k_start', TypeError, dict(cu_seq_len_k_start=[0] * 64), 'torch.Tensor'),
    ('cu_seq_len_k_start', ValueError, dict(cu_seq_len_k_start=i32(63)), '[64]'),
    ('cu_seq_len_k_start', ValueError, dict(cu_seq_len_k_start=T((64, ), 'int64')), 'int32'),
    ('cu_seq_len_k_start', ValueError, dict(cu_seq_len_k_start=i32(64, strides=(2, ))), 'contiguous'),
    ('cu_seq_len_k_end', ValueError, dict(cu_seq_len_k_end=i32(64, 1)), '[64]'),
    ('cu_seq_len_k_end', ValueError, dict(cu_seq_len_k_end=T((64, ), 'uint8')), 'int32'),
    ('weights', ValueError, dict(weights=f32(64, 32, device='cpu')), 'CUDA tensor'),
    ('kv', ValueError, dict(kv=(fp8(256, 128, index=1), f32(256, index=1))), 'cuda:0'),
])
def test_prefill_bad_arguments_are_named(argument, exc, over, words):
    assert words in raises(exc, argument, mqa.fp8_fp4_mqa_logits, **prefill(**over))


def test_prefill_bad_scalars_are_named():
    fn, args = mqa.fp8_fp4_mqa_logits, prefill()
    raises(TypeError, 'clean_logits', fn, **args, clean_logits=1)
    assert 'compressed' in raises(ValueError, 'clean_logits', fn, **args, clean_logits=True, max_seqlen_k=64)
    raises(TypeError, 'max_seqlen_k', fn, **args, clean_logits=False, max_seqlen_k=64.0)
    raises(ValueError, 'max_seqlen_k', fn, **args, clean_logits=False, max_seqlen_k=-1)
    raises(ValueError, 'max_seqlen_k', fn, **args, clean_logits=False, max_seqlen_k=2**31)
    raises(TypeError, 'logits_dtype', fn, **args, logits_dtype='float32')
    raises(TypeError, 'logits_dtype', fn, **args, logits_dtype=T((1, ), 'float32').dtype)  # not torch's
    raises(TypeError, 'logits_dtype', fn, **args, logits_dtype=None)


def test_prefill_legacy_form_takes_q_as_a_tensor():
    args = prefill()
    raises(TypeError, 'q', mqa.fp8_mqa_logits, **args)  # the pair is fp8_fp4_mqa_logits's form
    args['q'] = args['q'][0]
    raises(ValueError, 'kv', mqa.fp8_mqa_logits, **{**args, 'kv': (fp8(256, 64), f32(256))})
    raises(ValueError, 'clean_logits', mqa.fp8_mqa_logits, **args, max_seqlen_k=8)
    with pytest.raises(TypeError):
        mqa.fp8_mqa_logits(**args, logits_dtype=mqa.FLOAT32)  # DeepGEMM's legacy form has no logits_dtype


# ----------------------------------------------------------------------------------------------------------------
# Paged decode: get_paged_mqa_logits_metadata, fp8_fp4_paged_mqa_logits / fp8_paged_mqa_logits.

def cache(blocks=10, row=132, strides=None, dtype='uint8', **kw):
    return T((blocks, 64, 1, row), dtype, strides=strides, **kw)


def paged(batch=4, next_n=2, heads=32, **over):
    args = dict(q=(fp8(batch, next_n, heads, 128), None), kv_cache=cache(), weights=f32(batch * next_n, heads),
                context_lens=i32(batch, next_n), block_table=i32(batch, 10), schedule_meta=i32(133, 2),
                max_context_len=640)
    args.update(over)
    return args


def test_metadata_bad_arguments_are_named():
    fn = mqa.get_paged_mqa_logits_metadata
    assert 'allocated with torch' in raises(TypeError, 'context_lens', fn, i32(4, 2), 64, 132)
    raises(TypeError, 'context_lens', fn, [[1, 2]], 64, 132)
    assert '2-D' in raises(ValueError, 'context_lens', fn, i32(4), 64, 132)
    raises(ValueError, 'context_lens', fn, T((4, 2), 'int64'), 64, 132)
    raises(ValueError, 'context_lens', fn, i32(4, 2, strides=(1, 4)), 64, 132)
    raises(ValueError, 'context_lens', fn, i32(4, 0), 64, 132)
    raises(ValueError, 'context_lens', fn, i32(4, 2, device='cpu'), 64, 132)
    assert 'SM100' in raises(ValueError, 'block_kv', fn, i32(4, 2), 32, 132)
    raises(TypeError, 'block_kv', fn, i32(4, 2), '64', 132)
    raises(ValueError, 'num_sms', fn, i32(4, 2), 64, 0)
    raises(TypeError, 'num_sms', fn, i32(4, 2), 64, True)
    raises(ValueError, 'num_sms', fn, i32(4, 2), 64, 2**31)
    assert 'SM100' in raises(ValueError, 'indices', fn, i32(4, 1), 64, 132, indices=i32(4))


def test_paged_valid_stand_ins_reach_the_allocation():
    assert 'allocated with torch' in raises(TypeError, 'q', mqa.fp8_fp4_paged_mqa_logits, **paged())
    args = paged(batch=3, next_n=1, heads=64, max_context_len=0)
    raises(TypeError, 'q', mqa.fp8_fp4_paged_mqa_logits, **args)
    args['q'] = args['q'][0]
    raises(TypeError, 'q', mqa.fp8_paged_mqa_logits, **args)
    # Padded blocks (stride(0) a multiple of 16 above 8448 bytes) are taken, as are block tables with padded rows.
    raises(TypeError, 'q', mqa.fp8_fp4_paged_mqa_logits,
           **paged(kv_cache=cache(strides=(8464, 132, 132, 1)), block_table=i32(4, 10, strides=(16, 1))))


@pytest.mark.parametrize('argument,exc,over,words', [
    ('q', TypeError, dict(q=fp8(4, 2, 32, 128)), 'pair'),
    ('q', ValueError, dict(q=(T((4, 2, 32, 64), 'int8'), i32(4, 2, 32))), 'SM90 has FP8 only'),
    ('q', ValueError, dict(q=(T((4, 2, 32, 64), 'int8'), None)), 'SM90 has FP8 only'),
    ('q', ValueError, dict(q=(fp8(8, 32, 128), None)), '4-D'),
    ('q', ValueError, dict(q=(T((4, 2, 32, 128), 'bfloat16'), None)), 'float8_e4m3fn'),
    ('q', ValueError, dict(q=(fp8(4, 3, 32, 128), None), weights=f32(12, 32), context_lens=i32(4, 3)), 'next_n'),
    ('q', ValueError, dict(q=(fp8(4, 2, 16, 128), None), weights=f32(8, 16)), 'H 32 or 64'),
    ('q', ValueError, dict(q=(fp8(4, 2, 32, 64), None)), '128'),
    ('q', ValueError, dict(q=(fp8(4, 2, 32, 128, strides=(256 * 32, 128, 256, 1)), None)), 'contiguous'),
    ('q', ValueError, dict(q=(fp8(4, 2, 32, 128, ptr=0x7F0000000001), None)), '16-byte'),
    ('kv_cache', TypeError, dict(kv_cache=None), 'torch.Tensor'),
    ('kv_cache', ValueError, dict(kv_cache=cache(row=68)), 'SM90 has FP8 only'),
    ('kv_cache', ValueError, dict(kv_cache=cache(dtype='int8')), 'torch.uint8'),
    ('kv_cache', ValueError, dict(kv_cache=cache(dtype='float8_e4m3fn')), 'torch.uint8'),
    ('kv_cache', ValueError, dict(kv_cache=T((10, 32, 1, 132), 'uint8')), '[num_blocks >= 1, 64, 1, 132]'),
    ('kv_cache', ValueError, dict(kv_cache=T((10, 64, 2, 132), 'uint8')), '[num_blocks >= 1, 64, 1, 132]'),
    ('kv_cache', ValueError, dict(kv_cache=cache(blocks=0)), '[num_blocks >= 1, 64, 1, 132]'),
    ('kv_cache', ValueError, dict(kv_cache=T((10, 64 * 132), 'uint8')), '[num_blocks >= 1, 64, 1, 132]'),
    ('kv_cache', ValueError, dict(kv_cache=cache(strides=(64 * 144, 144, 144, 1))), 'stride(1) = 132'),
    ('kv_cache', ValueError, dict(kv_cache=cache(strides=(8452, 132, 132, 1))), 'multiple of 16'),
    ('kv_cache', ValueError, dict(kv_cache=cache(ptr=0x7F0000000004)), '16-byte'),
    ('weights', ValueError, dict(weights=f32(4, 32)), '[8, 32]'),
    ('weights', ValueError, dict(weights=T((8, 32), 'bfloat16')), 'SM100'),
    ('weights', ValueError, dict(weights=f32(8, 32, strides=(64, 1))), 'contiguous'),
    ('weights', ValueError, dict(weights=f32(8, 32, ptr=0x7F0000000004)), '16-byte'),
    ('context_lens', ValueError, dict(context_lens=i32(4)), '2-D'),
    ('context_lens', ValueError, dict(context_lens=i32(4, 1)), '[4, 2]'),
    ('context_lens', ValueError, dict(context_lens=T((4, 2), 'int64')), 'int32'),
    ('context_lens', ValueError, dict(context_lens=i32(4, 2, strides=(1, 4))), 'contiguous'),
    ('block_table', TypeError, dict(block_table=None), 'torch.Tensor'),
    ('block_table', ValueError, dict(block_table=i32(3, 10)), 'B rows'),
    ('block_table', ValueError, dict(block_table=i32(40)), 'B rows'),
    ('block_table', ValueError, dict(block_table=T((4, 10), 'int64')), 'int32'),
    ('block_table', ValueError, dict(block_table=i32(4, 10, strides=(1, 4))), 'stride(1) = 1'),
    ('schedule_meta', ValueError, dict(schedule_meta=i32(133, 3)), '[num_sms + 1, 2]'),
    ('schedule_meta', ValueError, dict(schedule_meta=i32(1, 2)), '[num_sms + 1, 2]'),
    ('schedule_meta', ValueError, dict(schedule_meta=T((133, 2), 'int64')), 'int32'),
    ('schedule_meta', ValueError, dict(schedule_meta=i32(133, 2, strides=(1, 133))), 'contiguous'),
    ('schedule_meta', ValueError, dict(schedule_meta=i32(133, 2, index=1)), 'cuda:0'),
    ('max_context_len', TypeError, dict(max_context_len=640.0), 'int'),
    ('max_context_len', ValueError, dict(max_context_len=-1), 'in [0'),
])
def test_paged_bad_arguments_are_named(argument, exc, over, words):
    assert words in raises(exc, argument, mqa.fp8_fp4_paged_mqa_logits, **paged(**over))


def test_paged_bad_options_are_named():
    fn, args = mqa.fp8_fp4_paged_mqa_logits, paged()
    assert '2-D context_lens' in raises(ValueError, 'clean_logits', fn, **args, clean_logits=True)
    raises(TypeError, 'clean_logits', fn, **args, clean_logits=0)
    raises(TypeError, 'logits_dtype', fn, **args, logits_dtype='bfloat16')
    assert 'SM100' in raises(ValueError, 'indices', fn, **args, indices=i32(4))
    legacy = {**args, 'q': args['q'][0]}
    raises(ValueError, 'indices', mqa.fp8_paged_mqa_logits, **legacy, indices=i32(4))
    raises(ValueError, 'clean_logits', mqa.fp8_paged_mqa_logits, **legacy, clean_logits=True)


@pytest.mark.skipif(not HAVE_TORCH, reason='needs torch dtypes and CPU tensors')
def test_torch_objects_are_checked_too():
    import torch
    raises(ValueError, 'logits_dtype', mqa.fp8_fp4_mqa_logits, **prefill(), logits_dtype=torch.float16)
    raises(ValueError, 'logits_dtype', mqa.fp8_fp4_paged_mqa_logits, **paged(), logits_dtype=torch.int32)
    # CPU tensors of the right shapes: named as not on a GPU, before any allocation or C++ call.
    q = torch.zeros(8, 32, 64).to(torch.float8_e4m3fn)
    kv = (torch.zeros(128, 64).to(torch.float8_e4m3fn), torch.ones(128))
    ks, ke = torch.zeros(8, dtype=torch.int32), torch.full((8, ), 128, dtype=torch.int32)
    assert 'CUDA' in raises(ValueError, 'q', mqa.fp8_fp4_mqa_logits, (q, None), kv, torch.ones(8, 32), ks, ke,
                            logits_dtype=torch.bfloat16)
    kv_cache = torch.zeros(4, 64, 1, 132, dtype=torch.uint8)
    assert 'CUDA' in raises(ValueError, 'q', mqa.fp8_paged_mqa_logits, torch.zeros(2, 1, 64, 128).to(
        torch.float8_e4m3fn), kv_cache, torch.ones(2, 64), torch.ones(2, 1, dtype=torch.int32),
        torch.zeros(2, 4, dtype=torch.int32), torch.zeros(133, 2, dtype=torch.int32), 256)
    raises(ValueError, 'kv_cache', mqa.fp8_paged_mqa_logits, torch.zeros(2, 1, 64, 128).to(torch.float8_e4m3fn),
           kv_cache.view(torch.int8), torch.ones(2, 64), torch.ones(2, 1, dtype=torch.int32),
           torch.zeros(2, 4, dtype=torch.int32), torch.zeros(133, 2, dtype=torch.int32), 256)
    assert 'CUDA' in raises(ValueError, 'context_lens', mqa.get_paged_mqa_logits_metadata,
                            torch.ones(2, 1, dtype=torch.int32), 64, 132)


# ----------------------------------------------------------------------------------------------------------------
# The bindings: the C++ layer re-checks what it is given (views built by hand, invalid, so nothing reaches a GPU)
# and names DeepGEMM's arguments; the layout helpers give DeepGEMM's allocation.

CODES = _C.dtype_codes()
PTR = 0x7F0000000000


def v(shape, dtype, strides=None):
    if strides is None:
        strides, running = [], 1
        for size in reversed(shape):
            strides.insert(0, running)
            running *= size
    return (PTR, CODES[dtype], list(shape), list(strides))


def test_the_cpp_layer_rechecks_and_names_deepgemms_arguments():
    good = [v((64, 32, 128), 'fp8'), v((256, 128), 'fp8'), v((256, ), 'fp32'), v((64, 32), 'fp32'),
            v((64, ), 'int32'), v((64, ), 'int32'), v((64, 256), 'fp32', (1280, 1))]

    def prefill_with(index, bad, clean=True, max_seqlen_k=0):
        views = list(good)
        if index is not None:
            views[index] = bad
        return lambda: _C.fp8_mqa_logits(*views, clean, max_seqlen_k, 0, 0, 0)

    for index, bad, name in ((2, v((255, ), 'fp32'), 'kv[1]'), (0, v((64, 32, 128), 'bf16'), 'q'),
                             (1, v((256, 64), 'fp8'), 'kv'), (3, v((64, 16), 'fp32'), 'weights'),
                             (5, v((63, ), 'int32'), 'cu_seq_len_k_end'), (6, v((64, 200), 'fp32'), 'logits')):
        raises(ValueError, name, prefill_with(index, bad))
    raises(ValueError, 'clean_logits', prefill_with(6, v((64, 100), 'fp32', (512, 1)), True, 100))

    paged_good = [v((4, 2, 32, 128), 'fp8'), v((10, 64, 1, 132), 'int8'), v((8, 32), 'fp32'), v((4, 2), 'int32'),
                  v((4, 10), 'int32'), v((133, 2), 'int32'), v((8, 640), 'fp32', (768, 1))]
    for index, bad, name in ((1, v((10, 64, 1, 132), 'fp8'), 'kv_cache'), (5, v((133, 3), 'int32'), 'schedule_meta'),
                             (4, v((3, 10), 'int32'), 'block_table'), (6, v((7, 640), 'fp32'), 'logits')):
        views = list(paged_good)
        views[index] = bad
        raises(ValueError, name, _C.fp8_paged_mqa_logits, *views, False, 0, 0)
    raises(ValueError, 'clean_logits', _C.fp8_paged_mqa_logits, *paged_good, True, 0, 0)
    raises(ValueError, 'block_kv', _C.paged_mqa_logits_metadata, v((4, 2), 'int32'), 32, v((133, 2), 'int32'), 0, 0)
    raises(ValueError, 'schedule_meta', _C.paged_mqa_logits_metadata, v((4, 2), 'int32'), 64, v((1, 2), 'int32'),
           0, 0)


def align(x, y):
    return (x + y - 1) // y * y


@pytest.mark.parametrize('seq_len,seq_len_kv,heads,max_seqlen_k', [
    (0, 0, 32, 0), (1, 1, 64, 0), (100, 1000, 32, 0), (2048, 8192, 64, 0), (77, 5000, 32, 300), (4096, 65536, 64, 1),
])
@pytest.mark.parametrize('dtype,itemsize', [('fp32', 4), ('bf16', 2)])
def test_prefill_layout_is_deepgemms_allocation(seq_len, seq_len_kv, heads, max_seqlen_k, dtype, itemsize):
    # DeepGEMM: [align(seq_len, 128 / H), stride] with stride align(seq_len_kv + 256, 1024 B) or
    # align(align(max_seqlen_k, 256), 1024 B); the view [:seq_len, :seq_len_kv or max_seqlen_k].
    per_kb = 1024 // itemsize
    stride = align(seq_len_kv + 256, per_kb) if max_seqlen_k == 0 else align(align(max_seqlen_k, 256), per_kb)
    cols = seq_len_kv if max_seqlen_k == 0 else max_seqlen_k
    assert _C.mqa_logits_layout(seq_len, seq_len_kv, heads, max_seqlen_k, CODES[dtype]) == \
        (align(seq_len, 128 // heads), stride, cols)


@pytest.mark.parametrize('max_context_len', [0, 1, 255, 256, 640, 1000, 65536, 65537])
@pytest.mark.parametrize('dtype,itemsize', [('fp32', 4), ('bf16', 2)])
def test_paged_row_stride_is_deepgemms(max_context_len, dtype, itemsize):
    assert _C.paged_mqa_logits_row_stride(max_context_len, CODES[dtype]) == \
        align(align(max_context_len, 256), 1024 // itemsize)


def test_layout_helpers_name_bad_values():
    raises(ValueError, 'num_heads', _C.mqa_logits_layout, 64, 256, 16, 0, CODES['fp32'])
    raises(ValueError, 'logits_dtype', _C.mqa_logits_layout, 64, 256, 32, 0, CODES['fp16'])
    raises(ValueError, 'logits_dtype', _C.paged_mqa_logits_row_stride, 64, 99)
    raises(ValueError, 'max_context_len', _C.paged_mqa_logits_row_stride, -1, CODES['fp32'])


# ----------------------------------------------------------------------------------------------------------------
# GPU: DeepGEMM's tests/test_attention.py, compact (its references, masks and bars; small shapes).

needs_gpu = pytest.mark.skipif(not HAVE_TORCH or not gpu_available(), reason='needs torch and a CUDA GPU')


def ref_fp8_mqa_logits(torch, q, kv, weights, ks, ke):
    seq_len_kv = kv.shape[0]
    score = torch.einsum('mhd,nd->hmn', q.float(), kv.float())
    logits = torch.einsum('hmn,hm->mn', score.relu(), weights.transpose(0, 1).contiguous())
    cols = torch.arange(0, seq_len_kv, device='cuda')
    mask = (cols[None, :] >= ks[:, None]) & (cols[None, :] < ke[:, None])
    return logits.masked_fill(~mask, float('-inf'))


def ks_ke(torch, seq_len, seq_len_kv, disable_cp):
    if disable_cp:
        ks = torch.zeros(seq_len, dtype=torch.int, device='cuda')
        ke = torch.arange(seq_len, dtype=torch.int, device='cuda') + (seq_len_kv - seq_len)
        return ks, ke
    chunk_size, cp_size = seq_len // 2, seq_len_kv // seq_len
    cp_id = cp_size // 3
    ks = torch.zeros(seq_len, dtype=torch.int, device='cuda')
    ke = torch.zeros(seq_len, dtype=torch.int, device='cuda')
    for i in range(chunk_size):
        ke[i] = cp_id * chunk_size + i
        ke[i + chunk_size] = (cp_size * 2 - 1 - cp_id) * chunk_size + i
    return ks, ke


@needs_gpu
@pytest.mark.parametrize('seq_len,seq_len_kv,heads,head_dim,bf16_logits,compressed,disable_cp', [
    (256, 2048, 32, 128, False, False, False),
    (256, 1024, 64, 64, True, True, False),
    (200, 777, 32, 32, False, False, True),
])
def test_gpu_mqa_logits(seq_len, seq_len_kv, heads, head_dim, bf16_logits, compressed, disable_cp):
    import torch
    from deep_gemm.testing import assert_bitwise_equal, calc_diff
    from deep_gemm.utils import per_custom_dims_cast_to_fp8
    torch.manual_seed(0)
    logits_dtype = torch.bfloat16 if bf16_logits else torch.float
    clean_logits = not compressed
    q = torch.randn(seq_len, heads, head_dim, device='cuda', dtype=torch.bfloat16)
    kv = torch.randn(seq_len_kv, head_dim, device='cuda', dtype=torch.bfloat16)
    weights = torch.randn(seq_len, heads, device='cuda', dtype=torch.float32)
    ks, ke = ks_ke(torch, seq_len, seq_len_kv, disable_cp)
    ref_logits = ref_fp8_mqa_logits(torch, q, kv, weights, ks, ke)
    q_in = q.to(torch.float8_e4m3fn), None
    kv_in = per_custom_dims_cast_to_fp8(kv, (0, ), False)
    kv_simulated = (kv_in[0].float() * kv_in[1].unsqueeze(1)).to(torch.bfloat16)
    simulated_logits = ref_fp8_mqa_logits(torch, q_in[0].to(torch.bfloat16), kv_simulated, weights, ks, ke)

    kwargs = dict(q=q_in, kv=kv_in, weights=weights, cu_seq_len_k_start=ks, cu_seq_len_k_end=ke,
                  clean_logits=clean_logits, max_seqlen_k=0, logits_dtype=logits_dtype)
    if compressed:
        kwargs['max_seqlen_k'] = max_seqlen_k = (ke - ks).max().item()
    logits = mqa.fp8_fp4_mqa_logits(**kwargs)

    # DeepGEMM's allocation: a view of [align(seq_len, 128 / H), 1024-byte aligned stride].
    width = max_seqlen_k if compressed else seq_len_kv
    rows, stride, cols = _C.mqa_logits_layout(seq_len, seq_len_kv, heads, kwargs['max_seqlen_k'],
                                              CODES['bf16' if bf16_logits else 'fp32'])
    assert logits.shape == (seq_len, width) and cols == width and logits.dtype == logits_dtype
    assert logits.stride() == (stride, 1) and stride * logits.element_size() % 1024 == 0
    assert logits.untyped_storage().nbytes() == rows * stride * logits.element_size()

    if compressed:
        self_mask = torch.arange(logits.size(1), device='cuda')[None, :] < (ke - ks)[:, None]
        masked_logits = logits.masked_fill(~self_mask, 0)
    else:
        masked_logits = logits
    for _ in range(5):
        again = mqa.fp8_fp4_mqa_logits(**kwargs)
        if compressed:
            again = again.masked_fill(~self_mask, 0)
        assert_bitwise_equal(again, masked_logits, 'mqa logits self-consistency')
    if compressed:
        full = torch.full((seq_len, seq_len_kv), float('-inf'), device='cuda')
        for i in range(seq_len):
            full[i, ks[i]:ke[i]] = logits[i, :ke[i] - ks[i]]
        logits = full
    logits = logits.float()

    ref_neginf_mask = ref_logits == float('-inf')
    assert torch.equal(logits == float('-inf'), ref_neginf_mask)
    logits = logits.masked_fill(ref_neginf_mask, 0)
    diff = calc_diff(logits, ref_logits.masked_fill(ref_neginf_mask, 0))
    simulated_diff = calc_diff(logits, simulated_logits.masked_fill(ref_neginf_mask, 0))
    assert diff < 1e-3, diff
    assert simulated_diff < (3e-5 if bf16_logits else 5e-6), simulated_diff
    if not compressed:  # the legacy form: fp32 logits of the same call
        legacy = mqa.fp8_mqa_logits(q_in[0], kv_in, weights, ks, ke, clean_logits=True)
        assert legacy.dtype == torch.float32 and legacy.shape == (seq_len, seq_len_kv)


def ref_paged_mqa_logits(torch, q, kv_cache, weights, context_lens, block_tables, max_model_len):
    batch_size, next_n, _, dim = q.size()
    _, block_size, _, dim = kv_cache.size()
    logits = torch.full([batch_size * next_n, max_model_len], float('-inf'), device=q.device, dtype=torch.float32)
    context_lens = context_lens.tolist()
    for i in range(batch_size):
        context_len = context_lens[i]
        q_offsets = torch.full((next_n, ), context_len, device='cuda', dtype=torch.int32)
        weight_slice = weights[i * next_n:(i + 1) * next_n, :].transpose(0, 1).contiguous()
        num_blocks = (context_len + block_size - 1) // block_size
        kv_slice = kv_cache[block_tables[i][:num_blocks]]
        kx = kv_slice.permute(2, 3, 0, 1).reshape(kv_slice.size(2), dim, -1)
        s = torch.matmul(q[i].transpose(0, 1), kx).to(logits.dtype)
        total_len = num_blocks * block_size
        k_offsets = torch.arange(0, total_len, device=q.device)
        mask = (k_offsets[None, :] < context_len) & (k_offsets[None, :] <= q_offsets[:, None])
        s = torch.where(mask[None, :, :], s, float('-inf'))
        s = (torch.relu(s) * weight_slice[..., None]).sum(dim=0)
        logits[i * next_n:(i + 1) * next_n, :total_len] = torch.where(k_offsets[None, :] <= q_offsets[:, None], s,
                                                                      float('-inf'))
    return logits


@needs_gpu
@pytest.mark.parametrize('batch_size,next_n,heads,avg_kv,bf16_logits', [
    (4, 1, 32, 1000, True),
    (3, 2, 64, 3000, False),
    (16, 2, 32, 300, False),
])
def test_gpu_paged_mqa_logits(batch_size, next_n, heads, avg_kv, bf16_logits):
    import torch
    from deep_gemm.testing import assert_bitwise_equal, calc_diff
    torch.manual_seed(0)
    block_kv, head_dim = 64, 128
    logits_dtype = torch.bfloat16 if bf16_logits else torch.float
    q = torch.randn((batch_size, next_n, heads, head_dim), device='cuda', dtype=torch.bfloat16)
    weights = torch.randn((batch_size * next_n, heads), device='cuda', dtype=torch.float)
    context_lens = torch.randint(int(0.7 * avg_kv), int(1.3 * avg_kv), (batch_size, ), device='cuda',
                                 dtype=torch.int)
    num_blocks_per_query = (context_lens + block_kv - 1) // block_kv
    max_model_len = num_blocks_per_query.max().item() * block_kv
    num_total_blocks = num_blocks_per_query.sum().item()
    kv_cache = torch.randn((num_total_blocks, block_kv, 1, head_dim), device='cuda', dtype=torch.bfloat16)
    block_table = torch.zeros((batch_size, num_blocks_per_query.max().item()), device='cuda', dtype=torch.int)
    block_idx_pool = torch.randperm(num_total_blocks, device='cuda', dtype=torch.int)
    offset = 0
    for i, num_blocks in enumerate(num_blocks_per_query.tolist()):
        block_table[i, :num_blocks] = block_idx_pool[offset:offset + num_blocks]
        offset += num_blocks

    ref_logits = ref_paged_mqa_logits(torch, q, kv_cache, weights, context_lens, block_table, max_model_len)
    q_in = q.to(torch.float8_e4m3fn), None
    kv_in, kv_simulated = kv_cache_cast_to_fp8(torch, kv_cache)
    kv_simulated = kv_simulated.to(kv_cache.dtype)
    simulated_logits = ref_paged_mqa_logits(torch, q_in[0].to(torch.bfloat16), kv_simulated, weights, context_lens,
                                            block_table, max_model_len)

    positions = torch.arange(max_model_len, device='cuda').unsqueeze(0).expand(batch_size * next_n, -1)
    context_lens_nextn = ((context_lens.unsqueeze(1) + 1) * torch.rand(batch_size, next_n, device='cuda')).int()
    context_lens_nextn[:, -1] = context_lens
    ref_neginf_mask = ~(positions < context_lens_nextn.view(-1, 1))

    num_sms = deep_gemm.get_num_sms()
    schedule_meta = mqa.get_paged_mqa_logits_metadata(context_lens_nextn, block_kv, num_sms)
    assert schedule_meta.shape == (num_sms + 1, 2) and schedule_meta.dtype == torch.int32
    kwargs = dict(q=q_in, kv_cache=kv_in, weights=weights, context_lens=context_lens_nextn, block_table=block_table,
                  schedule_meta=schedule_meta, max_context_len=max_model_len, clean_logits=False,
                  logits_dtype=logits_dtype, indices=None)
    logits = mqa.fp8_fp4_paged_mqa_logits(**kwargs)

    # DeepGEMM's allocation: the first max_context_len columns of rows aligned to 256 columns and 1024 bytes.
    stride = align(align(max_model_len, 256), 1024 // logits.element_size())
    assert logits.shape == (batch_size * next_n, max_model_len) and logits.dtype == logits_dtype
    assert logits.stride() == (stride, 1)
    assert logits.untyped_storage().nbytes() == batch_size * next_n * stride * logits.element_size()

    masked_logits = logits.masked_fill(ref_neginf_mask, 0)
    for _ in range(5):
        again = mqa.fp8_fp4_paged_mqa_logits(**kwargs).masked_fill(ref_neginf_mask, 0)
        assert_bitwise_equal(again, masked_logits, 'paged mqa logits self-consistency')
    logits = logits.float().masked_fill(ref_neginf_mask, 0)
    diff = calc_diff(logits, ref_logits.masked_fill(ref_neginf_mask, 0))
    simulated_diff = calc_diff(logits, simulated_logits.masked_fill(ref_neginf_mask, 0))
    assert diff < 1e-3, diff
    assert simulated_diff < (3e-5 if bf16_logits else 5e-6), simulated_diff

    legacy = mqa.fp8_paged_mqa_logits(q_in[0], kv_in, weights, context_lens_nextn, block_table, schedule_meta,
                                      max_model_len)
    assert legacy.dtype == torch.float32 and legacy.shape == (batch_size * next_n, max_model_len)
