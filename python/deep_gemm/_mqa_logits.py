"""DeepSeek-V3.2's MQA logits (the lightning indexer's scores) with DeepGEMM 2.6.1's names, argument order, defaults
and results, on tilegemm's SM90 kernels (include/tilegemm/mqa_logits.hpp, paged_mqa_logits.hpp).

Private until those kernels have passed their GPU tests (docs/python.md says how they will then be exported): the
package does not import this module, deep_gemm does not export its names and no torch op is registered for them.

- ``fp8_fp4_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0,
  logits_dtype=torch.float32)``, prefill: q = (float8_e4m3fn [seq_len, H, D], None), kv = (float8_e4m3fn
  [seq_len_kv, D], float32 [seq_len_kv]), weights float32 [seq_len, H], the windows int32 [seq_len]. Returns logits
  [seq_len, seq_len_kv] (max_seqlen_k > 0: [seq_len, max_seqlen_k], row i's column c for token ks[i] + c), the
  view DeepGEMM returns of a new [seq_len rounded up to 128 / H, row stride] tensor (the row stride a multiple of
  1024 bytes: _C.mqa_logits_layout, the C++ library's mqa_logits_layout).
- ``fp8_mqa_logits``: DeepGEMM's legacy form, q a tensor and float32 logits.
- ``get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms, indices=None)``: a new int32 [num_sms + 1, 2]
  schedule for int32 [B, next_n] context_lens, block_kv 64, on the device of context_lens.
- ``fp8_fp4_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
  clean_logits=False, logits_dtype=torch.float32, indices=None)``, decode: q = (float8_e4m3fn [B, next_n, H, 128],
  None), the fused cache torch.uint8 [num_blocks, 64, 1, 132]. Returns logits [B·next_n, max_context_len], the first
  max_context_len columns of a new tensor whose rows are _C.paged_mqa_logits_row_stride apart, as DeepGEMM's.
- ``fp8_paged_mqa_logits``: the legacy form, q a tensor and float32 logits.

SM90 has FP8 only: a q with scale factors (DeepGEMM's packed FP4 form), a packed-FP4 kv or kv_cache, bf16 weights and
``indices`` (varlen decode) run on SM100 in DeepGEMM and raise ValueError naming the argument here. The fused KV cache
is torch.uint8 as in DeepGEMM; it reaches the C++ layer as int8 bytes (_tensor.raw_bytes_view). Every other bad
argument raises TypeError/ValueError naming it before any C++ call; the C++ layer checks again (ValueError with its
message). Results are computed on torch's current stream of the tensors' device.

``logits_dtype``'s default is FLOAT32: torch.float32 without importing torch (it compares equal to torch.float32 and
prints as it), so the package still imports without torch.
"""
import sys

from . import _C
from ._checks import (INT32_MAX, dims, dtype_name, is_contiguous, require_bool, require_int, require_tensor, shape_of,
                      strides_of)
from ._config import num_sms_setting
from ._tensor import common_device, current_stream, raw_bytes_view, view

_CODES = _C.dtype_codes()
_PACKED_FP4_DTYPES = ('int8', 'uint8', 'float4_e2m1fn_x2')  # DeepGEMM's kPackedFP4 is int8
_SM90_FP8_ONLY = 'SM90 has FP8 only (DeepGEMM runs packed FP4 on SM100; tilegemm has no FP4 kernel)'
_PAGED_BLOCK_KV = 64  # the SM90 kernel's KV block (DeepGEMM's SM90 takes only 64)
_PAGED_HEAD_DIM = 128
_TMA_ALIGNMENT = 16
_LOGITS_DTYPES = {'float32': 'fp32', 'bfloat16': 'bf16'}  # torch's name -> tilegemm's (_C.dtype_codes)


class _Float32:
    """torch.float32 before torch is imported: the default of ``logits_dtype``."""
    __slots__ = ()

    def __eq__(self, other):
        return isinstance(other, _Float32) or (type(other).__module__ == 'torch' and str(other) == 'torch.float32')

    def __hash__(self):
        return hash('torch.float32')

    def __repr__(self):
        return 'torch.float32'


FLOAT32 = _Float32()


def _torch_of(t, name):
    """torch, for allocating the result next to ``t`` (a torch tensor: the stand-ins the checks accept cannot)."""
    torch = sys.modules.get('torch')  # a torch tensor exists only once torch is imported
    if torch is None or not isinstance(t, torch.Tensor):
        raise TypeError(f'{name}: expected a torch.Tensor (the result is allocated with torch), got '
                        f'{type(t).__module__}.{type(t).__qualname__}')
    return torch


def _logits_dtype(logits_dtype):
    """(torch's name, tilegemm's name) of torch.float32 (or FLOAT32) and torch.bfloat16; TypeError/ValueError for
    anything else."""
    if isinstance(logits_dtype, _Float32):
        return 'float32', _LOGITS_DTYPES['float32']
    if type(logits_dtype).__module__ != 'torch' or not str(logits_dtype).startswith('torch.'):
        raise TypeError(f'logits_dtype: expected a torch dtype (torch.float32 or torch.bfloat16), got '
                        f'{type(logits_dtype).__name__} {logits_dtype!r}')
    name = str(logits_dtype)[len('torch.'):]
    if name not in _LOGITS_DTYPES:
        raise ValueError(f'logits_dtype: expected torch.float32 or torch.bfloat16, got {logits_dtype}')
    return name, _LOGITS_DTYPES[name]


def _dtype(t, name, expected, what=''):
    if dtype_name(t) != expected:
        raise ValueError(f'{name}: expected {expected} elements{what}, got {t.dtype}')


def _contiguous(t, name, what):
    if not is_contiguous(t):
        raise ValueError(f'{name}: expected a contiguous tensor {what}, got shape {tuple(shape_of(t))} with strides '
                         f'{tuple(strides_of(t))}')


def _aligned(t, name):
    """The kernels read ``t`` through TMA: a 16-byte aligned address (tensors without elements aside)."""
    if 0 not in shape_of(t) and t.data_ptr() % _TMA_ALIGNMENT:
        raise ValueError(f'{name}: expected a 16-byte aligned address (the kernel reads it through TMA), got '
                         f'{t.data_ptr():#x}')


def _fp8_q(q, name='q'):
    """The float8_e4m3fn tensor of DeepGEMM's (tensor, sf) q; sf must be None (with it, q is packed FP4)."""
    if not isinstance(q, (tuple, list)) or len(q) != 2:
        raise TypeError(f'{name}: expected a (float8_e4m3fn tensor, None) pair, got {type(q).__name__}')
    data, sf = q
    require_tensor(data, name)
    if sf is not None:
        raise ValueError(f'{name}: expected (float8_e4m3fn tensor, None), got scale factors '
                         f'({type(sf).__name__}): a q with scale factors is packed FP4, and {_SM90_FP8_ONLY}')
    return data


def _refuse_packed_fp4(t, name):
    if dtype_name(t) in _PACKED_FP4_DTYPES:
        raise ValueError(f'{name}: expected float8_e4m3fn data, got packed FP4 {dtype_name(t)} {tuple(shape_of(t))};'
                         f' {_SM90_FP8_ONLY}')


def _fp8_kv(kv):
    """(values, scales) of DeepGEMM's kv pair."""
    if not isinstance(kv, (tuple, list)) or len(kv) != 2:
        raise TypeError(f'kv: expected a (float8_e4m3fn tensor, float32 scales) pair, got {type(kv).__name__}')
    data, sf = require_tensor(kv[0], 'kv'), require_tensor(kv[1], 'kv[1]')
    _refuse_packed_fp4(data, 'kv')
    if dtype_name(sf) == 'int32':  # DeepGEMM's FP4 kv scales: packed UE8M0
        raise ValueError(f'kv: expected float32 scales in kv[1], got int32 (packed FP4 scale factors); '
                         f'{_SM90_FP8_ONLY}')
    return data, sf


def _require_indices_none(indices):
    if indices is not None:
        raise ValueError(f'indices: expected None (varlen decode, DeepGEMM\'s indices, runs on SM100 only; SM90 takes '
                         f'context_lens [B, next_n]), got {type(indices).__name__}')


def _require_weights(weights, rows, heads, row_what, contiguous):
    require_tensor(weights, 'weights')
    if dims(weights) != 2 or shape_of(weights) != [rows, heads]:
        raise ValueError(f'weights: expected float32 [{rows}, {heads}] ({row_what}, H), got '
                         f'{tuple(shape_of(weights))}')
    if dtype_name(weights) == 'bfloat16':
        raise ValueError('weights: expected float32 elements (bf16 weights run on SM100 only in DeepGEMM), got '
                         'torch.bfloat16')
    _dtype(weights, 'weights', 'float32')
    if contiguous:
        _contiguous(weights, 'weights', f'[{row_what}, H]')
    elif heads > 1 and strides_of(weights)[1] != 1:
        raise ValueError(f'weights: expected H contiguous (stride 1), got strides {tuple(strides_of(weights))}')


def _require_window(t, name, seq_len):
    require_tensor(t, name)
    if dims(t) != 1 or shape_of(t)[0] != seq_len:
        raise ValueError(f'{name}: expected int32 [{seq_len}] (seq_len), got {tuple(shape_of(t))}')
    _dtype(t, name, 'int32')
    _contiguous(t, name, '[seq_len]')


def _mqa_logits(q_data, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, max_seqlen_k,
                logits_dtype):
    # q float8_e4m3fn [seq_len, H, D], H 32 or 64 (SM90), D 32, 64 or 128, contiguous.
    _refuse_packed_fp4(q_data, 'q')
    if dims(q_data) != 3:
        raise ValueError(f'q: expected a 3-D float8_e4m3fn tensor [seq_len, H, D], got {dims(q_data)}-D '
                         f'{tuple(shape_of(q_data))}')
    _dtype(q_data, 'q', 'float8_e4m3fn')
    seq_len, heads, head_dim = shape_of(q_data)
    if heads not in (32, 64):
        raise ValueError(f'q: expected 32 or 64 heads (q [seq_len, H, D]; SM90 takes no other), got '
                         f'{tuple(shape_of(q_data))}')
    if head_dim not in (32, 64, 128):
        raise ValueError(f'q: expected a head dim of 32, 64 or 128 (q [seq_len, H, D]), got '
                         f'{tuple(shape_of(q_data))}')
    _contiguous(q_data, 'q', '[seq_len, H, D]')
    if seq_len * heads > INT32_MAX:
        raise ValueError(f'q: expected seq_len · H below 2^31 (the kernel\'s int rows), got {seq_len} · {heads}')
    # kv (float8_e4m3fn [seq_len_kv, D], float32 [seq_len_kv]), both contiguous.
    kv_data, kv_sf = _fp8_kv(kv)
    if dims(kv_data) != 2 or shape_of(kv_data)[1] != head_dim:
        raise ValueError(f'kv: expected a float8_e4m3fn tensor [seq_len_kv, {head_dim}] (D as q\'s), got '
                         f'{tuple(shape_of(kv_data))}')
    _dtype(kv_data, 'kv', 'float8_e4m3fn')
    _contiguous(kv_data, 'kv', '[seq_len_kv, D]')
    seq_len_kv = shape_of(kv_data)[0]
    if seq_len_kv > INT32_MAX - 512:
        raise ValueError(f'kv: expected fewer than 2^31 - 512 tokens (the kernel\'s int arithmetic), got {seq_len_kv}')
    if dims(kv_sf) != 1 or shape_of(kv_sf)[0] != seq_len_kv:
        raise ValueError(f'kv[1]: expected float32 scales [{seq_len_kv}] (one per kv token), got '
                         f'{tuple(shape_of(kv_sf))}')
    _dtype(kv_sf, 'kv[1]', 'float32')
    _contiguous(kv_sf, 'kv[1]', '[seq_len_kv]')
    _require_weights(weights, seq_len, heads, 'seq_len', contiguous=False)
    _require_window(cu_seq_len_k_start, 'cu_seq_len_k_start', seq_len)
    _require_window(cu_seq_len_k_end, 'cu_seq_len_k_end', seq_len)
    require_bool(clean_logits, 'clean_logits')
    require_int(max_seqlen_k, 'max_seqlen_k', 0, INT32_MAX)
    if clean_logits and max_seqlen_k > 0:
        raise ValueError(f'clean_logits: expected False with compressed logits (max_seqlen_k = {max_seqlen_k} > 0), '
                         f'got True')
    torch_dtype, dtype = _logits_dtype(logits_dtype)
    for t, name in ((q_data, 'q'), (kv_data, 'kv'), (kv_sf, 'kv[1]')):
        _aligned(t, name)
    tensors = {'q': q_data, 'kv': kv_data, 'kv[1]': kv_sf, 'weights': weights,
               'cu_seq_len_k_start': cu_seq_len_k_start, 'cu_seq_len_k_end': cu_seq_len_k_end}
    device = common_device(**tensors)
    views = [view(t, name) for name, t in tensors.items()]

    # DeepGEMM's allocation: [align(seq_len, 128 / H), row stride], the result its [:seq_len, :cols] view.
    torch = _torch_of(q_data, 'q')
    rows, row_stride, cols = _C.mqa_logits_layout(seq_len, seq_len_kv, heads, max_seqlen_k, _CODES[dtype])
    logits = torch.empty((rows, row_stride), dtype=getattr(torch, torch_dtype), device=q_data.device)[:seq_len, :cols]
    _C.fp8_mqa_logits(*views, view(logits, 'logits'), clean_logits, max_seqlen_k, device, current_stream(device),
                      num_sms_setting())
    return logits


def fp8_fp4_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0,
                       logits_dtype=FLOAT32):
    return _mqa_logits(_fp8_q(q), kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, max_seqlen_k,
                       logits_dtype)


def fp8_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0):
    return _mqa_logits(require_tensor(q, 'q'), kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits,
                       max_seqlen_k, FLOAT32)


def _require_context_lens(context_lens, what):
    require_tensor(context_lens, 'context_lens')
    if dims(context_lens) != 2:
        raise ValueError(f'context_lens: expected a 2-D int32 tensor {what} (SM90 takes only the 2-D form), got '
                         f'{dims(context_lens)}-D {tuple(shape_of(context_lens))}')
    _dtype(context_lens, 'context_lens', 'int32')
    _contiguous(context_lens, 'context_lens', what)


def get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms, indices=None):
    _require_context_lens(context_lens, '[B, next_n]')
    if shape_of(context_lens)[1] < 1:
        raise ValueError(f'context_lens: expected int32 [B, next_n] with next_n >= 1, got '
                         f'{tuple(shape_of(context_lens))}')
    require_int(block_kv, 'block_kv')
    if block_kv != _PAGED_BLOCK_KV:
        raise ValueError(f'block_kv: expected {_PAGED_BLOCK_KV} (the SM90 kernel\'s KV block; 32 is SM100 only), got '
                         f'{block_kv}')
    require_int(num_sms, 'num_sms', 1, INT32_MAX - 1)
    _require_indices_none(indices)
    context_view = view(context_lens, 'context_lens')
    device = common_device(context_lens=context_lens)
    torch = _torch_of(context_lens, 'context_lens')
    schedule = torch.empty((num_sms + 1, 2), dtype=torch.int32, device=context_lens.device)
    _C.paged_mqa_logits_metadata(context_view, block_kv, view(schedule, 'schedule_meta'), device,
                                 current_stream(device))
    return schedule


def _paged_mqa_logits(q_data, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                      clean_logits, logits_dtype, indices):
    _require_indices_none(indices)
    # q float8_e4m3fn [B, next_n, H, 128], next_n 1 or 2, H 32 or 64, contiguous.
    _refuse_packed_fp4(q_data, 'q')
    if dims(q_data) != 4:
        raise ValueError(f'q: expected a 4-D float8_e4m3fn tensor [B, next_n, H, 128], got {dims(q_data)}-D '
                         f'{tuple(shape_of(q_data))}')
    _dtype(q_data, 'q', 'float8_e4m3fn')
    batch, next_n, heads, head_dim = shape_of(q_data)
    if next_n not in (1, 2) or heads not in (32, 64) or head_dim != _PAGED_HEAD_DIM:
        raise ValueError(f'q: expected float8_e4m3fn [B, next_n, H, 128] with next_n 1 or 2 and H 32 or 64 (SM90), '
                         f'got {tuple(shape_of(q_data))}')
    _contiguous(q_data, 'q', '[B, next_n, H, D]')
    if batch * next_n * heads > INT32_MAX:
        raise ValueError(f'q: expected B · next_n · H below 2^31 (the kernel\'s int rows), got '
                         f'{tuple(shape_of(q_data))}')
    # The fused cache: uint8 [num_blocks, 64, 1, 128 + 4], token rows 132 bytes apart, blocks 16-byte aligned.
    require_tensor(kv_cache, 'kv_cache')
    row_bytes = head_dim + 4
    cache_shape, cache_strides = shape_of(kv_cache), strides_of(kv_cache)
    if dims(kv_cache) == 4 and cache_shape[3] == head_dim // 2 + 4:
        raise ValueError(f'kv_cache: expected [num_blocks, 64, 1, {row_bytes}] bytes of FP8 values and fp32 scales, '
                         f'got {tuple(cache_shape)}, a packed FP4 cache; {_SM90_FP8_ONLY}')
    if dims(kv_cache) != 4 or cache_shape[0] < 1 or cache_shape[1:] != [_PAGED_BLOCK_KV, 1, row_bytes]:
        raise ValueError(f'kv_cache: expected uint8 [num_blocks >= 1, 64, 1, {row_bytes}] (block_kv 64, {head_dim} '
                         f'fp8 values and an fp32 scale per token), got {tuple(cache_shape)}')
    if dtype_name(kv_cache) != 'uint8':
        raise ValueError(f'kv_cache: expected torch.uint8 bytes (DeepGEMM\'s fused cache), got {kv_cache.dtype}')
    if cache_strides[1] != row_bytes or cache_strides[3] != 1:
        raise ValueError(f'kv_cache: expected token rows of {row_bytes} contiguous bytes (stride(1) = {row_bytes}, '
                         f'stride(3) = 1), got strides {tuple(cache_strides)}')
    block_bytes = _PAGED_BLOCK_KV * row_bytes
    if cache_strides[0] < block_bytes or cache_strides[0] % _TMA_ALIGNMENT:
        raise ValueError(f'kv_cache: expected blocks at least {block_bytes} bytes apart, a multiple of 16 (TMA), got '
                         f'stride(0) = {cache_strides[0]}')
    _require_weights(weights, batch * next_n, heads, 'B·next_n', contiguous=True)
    _require_context_lens(context_lens, f'[{batch}, {next_n}] (B, next_n)')
    if shape_of(context_lens) != [batch, next_n]:
        raise ValueError(f'context_lens: expected int32 [{batch}, {next_n}] (B, next_n), got '
                         f'{tuple(shape_of(context_lens))}')
    require_tensor(block_table, 'block_table')
    if dims(block_table) != 2 or shape_of(block_table)[0] != batch:
        raise ValueError(f'block_table: expected int32 [{batch}, max_blocks] (B rows), got '
                         f'{tuple(shape_of(block_table))}')
    _dtype(block_table, 'block_table', 'int32')
    if shape_of(block_table)[1] > 1 and strides_of(block_table)[1] != 1:
        raise ValueError(f'block_table: expected contiguous rows (stride(1) = 1), got strides '
                         f'{tuple(strides_of(block_table))}')
    require_tensor(schedule_meta, 'schedule_meta')
    if dims(schedule_meta) != 2 or shape_of(schedule_meta)[0] < 2 or shape_of(schedule_meta)[1] != 2:
        raise ValueError(f'schedule_meta: expected int32 [num_sms + 1, 2] (get_paged_mqa_logits_metadata\'s), got '
                         f'{tuple(shape_of(schedule_meta))}')
    _dtype(schedule_meta, 'schedule_meta', 'int32')
    _contiguous(schedule_meta, 'schedule_meta', '[num_sms + 1, 2]')
    require_int(max_context_len, 'max_context_len', 0, INT32_MAX)
    require_bool(clean_logits, 'clean_logits')
    if clean_logits:
        raise ValueError('clean_logits: expected False (with 2-D context_lens DeepGEMM 2.6.1 leaves the columns past '
                         'each row\'s blocks unwritten and refuses clean_logits), got True')
    torch_dtype, dtype = _logits_dtype(logits_dtype)
    for t, name in ((q_data, 'q'), (kv_cache, 'kv_cache'), (weights, 'weights')):
        _aligned(t, name)
    device = common_device(q=q_data, kv_cache=kv_cache, weights=weights, context_lens=context_lens,
                           block_table=block_table, schedule_meta=schedule_meta)
    views = (view(q_data, 'q'), raw_bytes_view(kv_cache, 'kv_cache'), view(weights, 'weights'),
             view(context_lens, 'context_lens'), view(block_table, 'block_table'),
             view(schedule_meta, 'schedule_meta'))

    # DeepGEMM's allocation: [B·next_n, row stride aligned to 256 columns and 1024 bytes], its first
    # max_context_len columns returned.
    torch = _torch_of(q_data, 'q')
    row_stride = _C.paged_mqa_logits_row_stride(max_context_len, _CODES[dtype])
    logits = torch.empty((batch * next_n, row_stride), dtype=getattr(torch, torch_dtype),
                         device=q_data.device)[:, :max_context_len]
    _C.fp8_paged_mqa_logits(*views, view(logits, 'logits'), clean_logits, device, current_stream(device))
    return logits


def fp8_fp4_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                             clean_logits=False, logits_dtype=FLOAT32, indices=None):
    return _paged_mqa_logits(_fp8_q(q), kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                             clean_logits, logits_dtype, indices)


def fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len,
                         clean_logits=False, indices=None):
    return _paged_mqa_logits(require_tensor(q, 'q'), kv_cache, weights, context_lens, block_table, schedule_meta,
                             max_context_len, clean_logits, FLOAT32, indices)
