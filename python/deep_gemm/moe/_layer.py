"""fp8_moe and its Workspace: the checks Python makes (tensor kinds and dtypes), then one C++ call that checks the
rest and launches the layer."""
import torch

from .. import _C
from .._checks import dtype_name, require_bool, require_int, require_tensor
from .._config import num_sms_setting
from .._tensor import common_device, current_stream, device_of, view

_CODES = _C.dtype_codes()


class Workspace:
    """The expert-sorted buffers of :func:`fp8_moe` for up to ``max_tokens`` tokens of ``topk`` experts out of
    ``experts`` (hidden size H, intermediate size I), on ``device``. One workspace serves one call at a time: calls on
    different streams need their own."""

    def __init__(self, max_tokens, topk, experts, hidden, intermediate, device):
        for value, name in ((max_tokens, 'max_tokens'), (topk, 'topk'), (experts, 'experts'), (hidden, 'hidden'),
                            (intermediate, 'intermediate')):
            require_int(value, name, low=0 if name == 'max_tokens' else 1)
        rows = _C.moe_buffer_rows(max_tokens, topk, experts)
        for value, name in ((hidden, 'hidden'), (intermediate, 'intermediate')):
            if value % 128:
                raise ValueError(f'{name}: expected a multiple of 128 (per-token scales cover 128 columns), got {value}')
        self.max_tokens, self.topk, self.experts = max_tokens, topk, experts
        self.hidden, self.intermediate, self.rows = hidden, intermediate, rows
        kw = dict(device=device)
        self.group_end = torch.empty(experts, dtype=torch.int32, **kw)
        self.row_of_buffer = torch.empty(max_tokens * topk, dtype=torch.int32, **kw)
        self.a1 = torch.empty((rows, hidden), dtype=torch.float8_e4m3fn, **kw)
        self.sfa1 = torch.empty((hidden // 128, rows), dtype=torch.float32, **kw).T  # MN-major
        self.h1 = torch.empty((rows, 2 * intermediate), dtype=torch.bfloat16, **kw)
        self.a2 = torch.empty((rows, intermediate), dtype=torch.float8_e4m3fn, **kw)
        self.sfa2 = torch.empty((intermediate // 128, rows), dtype=torch.float32, **kw).T
        self.y2 = torch.empty((rows, hidden), dtype=torch.bfloat16, **kw)

    def fits(self, tokens, topk, experts, hidden, intermediate, device):
        return (tokens <= self.max_tokens and topk == self.topk and experts == self.experts and hidden == self.hidden
                and intermediate == self.intermediate and device_of(self.a1, 'workspace') == device)

    def row_of(self, tokens):
        """Each pair's row in the expert-sorted buffers, int32 [tokens, topk] (-1 for a skipped id), after a call."""
        return self.row_of_buffer[:tokens * self.topk].view(tokens, self.topk)

    def _row_of_view(self, tokens):
        ptr, dtype, _, _ = view(self.row_of_buffer, 'row_of')
        return (ptr, dtype, [tokens, self.topk], [self.topk, 1])


def _pair(w, name):
    if not isinstance(w, (tuple, list)) or len(w) != 2:
        raise TypeError(f'{name}: expected a pair (e4m3 weights, fp32 block scales), got {type(w).__name__}')
    return require_tensor(w[0], f'{name}[0]'), require_tensor(w[1], f'{name}[1]')


def _require(t, name, *dtypes):
    require_tensor(t, name)
    if dtype_name(t) not in dtypes:
        raise TypeError(f'{name}: expected a tensor of {" or ".join(dtypes)} elements, got {dtype_name(t)}')
    return t


def _index_view(t, name):
    """``view`` of the int32 or int64 ids (``view`` refuses int64, which no GEMM takes)."""
    _require(t, name, 'int32', 'int64')
    device_of(t, name)
    return (int(t.data_ptr()), _CODES[dtype_name(t)], [int(s) for s in t.shape], [int(s) for s in t.stride()])


def fp8_moe(x, topk_idx, topk_weights, w1, w2, *, use_ue8m0=False, out=None, workspace=None):
    """The layer's output, bf16 [T, H] (``out`` when given). See the module's documentation."""
    _require(x, 'x', 'bfloat16')
    _require(topk_idx, 'topk_idx', 'int32', 'int64')
    w1_data, w1_sf = _pair(w1, 'w1')
    w2_data, w2_sf = _pair(w2, 'w2')
    require_bool(use_ue8m0, 'use_ue8m0')
    for t, name, what in ((x, 'x', '[T, H]'), (topk_idx, 'topk_idx', '[T, K]'), (w1_data, 'w1[0]', '[E, 2 * I, H]')):
        if len(t.shape) != len(what.split(',')):
            raise ValueError(f'{name}: expected a {what} tensor, got shape {tuple(t.shape)}')
    tokens, hidden = (int(s) for s in x.shape)
    topk, experts, intermediate = int(topk_idx.shape[1]), int(w1_data.shape[0]), int(w1_data.shape[1]) // 2
    device = common_device(x=x, topk_idx=topk_idx, topk_weights=topk_weights, w1=w1_data, **{'w1[1]': w1_sf},
                           w2=w2_data, **{'w2[1]': w2_sf}, out=out)
    if out is None:
        out = torch.empty((tokens, hidden), dtype=torch.bfloat16, device=x.device)
    if workspace is None:
        workspace = Workspace(tokens, topk, experts, hidden, intermediate, x.device)
    elif not isinstance(workspace, Workspace):
        raise TypeError(f'workspace: expected a deep_gemm.moe.Workspace, got {type(workspace).__name__}')
    elif not workspace.fits(tokens, topk, experts, hidden, intermediate, device):
        raise ValueError(f'workspace: expected one for at least {tokens} tokens of top-{topk} over {experts} experts, '
                         f'H = {hidden}, I = {intermediate} on cuda:{device}, got one for {workspace.max_tokens} tokens of '
                         f'top-{workspace.topk} over {workspace.experts}, H = {workspace.hidden}, '
                         f'I = {workspace.intermediate} on {workspace.a1.device}')
    ws = workspace
    views = [view(x, 'x'), _index_view(topk_idx, 'topk_idx'), view(_require(topk_weights, 'topk_weights', 'float32'),
                                                                    'topk_weights'),
             view(w1_data, 'w1[0]'), view(w1_sf, 'w1[1]'), view(w2_data, 'w2[0]'), view(w2_sf, 'w2[1]'),
             view(_require(out, 'out', 'bfloat16'), 'out'), view(ws.group_end, 'group_end'),
             ws._row_of_view(tokens), view(ws.a1, 'a1'), view(ws.sfa1, 'sfa1'), view(ws.h1, 'h1'),
             view(ws.a2, 'a2'), view(ws.sfa2, 'sfa2'), view(ws.y2, 'y2')]
    _C.fp8_moe_layer(views, use_ue8m0, device, current_stream(device), num_sms_setting())
    return out
