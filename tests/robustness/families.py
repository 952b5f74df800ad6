"""One robustness case per problem (see problems.py): guarded operands, the deep_gemm call, the float64 reference.

A case is built once (buffers allocated, pointers fixed) and can be refilled with fresh random data any number of
times, which is what CUDA-graph replays need: ``fill(seed)`` writes new inputs into the same memory and computes
the references, ``prepare()`` poisons the outputs, ``call(dg)`` runs the deep_gemm function, ``check()`` lists
what is wrong.
"""
import torch

from operands import POISON, Guarded, check_output, random_values
from problems import KINDS, function_name

FP8 = torch.float8_e4m3fn
PRODUCT_ROUNDING = 2.0**-8  # twice bf16's half ulp
FP32_TINY = torch.finfo(torch.float32).tiny  # an absolute slack: a kernel may flush fp32 subnormals to zero
TORCH_DTYPE = {'bf16': torch.bfloat16, 'fp16': torch.float16, 'fp32': torch.float32}


def ceil_div(x, y):
    return -(-x // y)


def cast_per_token(x):
    """DeepGEMM's per-token FP8 cast of a 2-D tensor (one scale per row and 128 columns); empty tensors too."""
    from deep_gemm.utils import per_token_cast_to_fp8
    if x.numel() == 0:
        return x.to(FP8), torch.ones(x.shape[0], ceil_div(x.shape[1], 128), device=x.device)
    return per_token_cast_to_fp8(x, use_ue8m0=False)


def cast_per_block(x):
    """DeepGEMM's per-block FP8 cast of a 2-D tensor (one scale per 128×128 block); empty tensors too."""
    from deep_gemm.utils import per_block_cast_to_fp8
    if x.numel() == 0:
        return x.to(FP8), torch.ones(ceil_div(x.shape[0], 128), ceil_div(x.shape[1], 128), device=x.device)
    return per_block_cast_to_fp8(x, use_ue8m0=False)


def cast_per_block_groups(w):
    """cast_per_block of each [N, K] matrix of a [G, N, K] tensor: (fp8 [G, N, K], scales [G, N/128, K/128])."""
    casts = [cast_per_block(w[g]) for g in range(w.shape[0])]
    return torch.stack([c[0] for c in casts]), torch.stack([c[1] for c in casts])


def dequant_token(data, sf):
    k = data.shape[-1]
    return data.double() * sf.double().repeat_interleave(128, dim=-1)[..., :k]


def dequant_block(data, sf):
    n, k = data.shape[-2:]
    return data.double() * sf.double().repeat_interleave(128, dim=-2)[..., :n, :].repeat_interleave(128, dim=-1)[..., :k]


def pad_of(flag, dtype):
    """Row padding of an operand: 16 bytes times 1-3 (TMA keeps 16-byte row strides), or none."""
    return 0 if not flag else 48 // torch.empty((), dtype=dtype).element_size()


class Output:
    def __init__(self, guarded, operand_dtype, in_place_c=None):
        self.g, self.operand_dtype, self.in_place_c = guarded, operand_dtype, in_place_c
        self.ref = self.absref = self.rows = self.extra = None


class Case:
    """Base: subclasses allocate in __init__ and set self.inputs (Guarded) and self.outputs (Output)."""

    def __init__(self, p, device):
        self.p, self.device = p, device
        self.inputs, self.outputs = [], []
        self.scale = p.get('scale', 1.0)
        self.fp8 = KINDS[p['kind']][1] == 'fp8'
        self.dtype = FP8 if self.fp8 else torch.bfloat16  # of the operands

    def gen(self, seed):
        return torch.Generator(device=self.device).manual_seed(seed)

    def rand(self, gen, shape, dtype=torch.bfloat16):
        return random_values(shape, gen, self.device, self.scale, dtype)

    def keep_scales(self, sfa, sfb):
        """The first fill's scale tensors are the call's from then on; later fills copy into them (graph replays
        read the same memory)."""
        if self.sfa is None:
            self.sfa, self.sfb = sfa, sfb
        else:
            self.sfa.copy_(sfa)
            self.sfb.copy_(sfb)

    def prepare(self):
        for o in self.outputs:
            o.g.poison_view()
            if o.in_place_c is not None:
                o.g.view.copy_(o.in_place_c)
        self.input_copies = [g.buffer.clone() for g in self.inputs]

    def observed(self, o):
        """(result, reference, |reference|) of an output as the check compares them: here the output's view."""
        return o.g.view, o.ref, o.absref

    def check(self):
        """Failures as strings: values out of bounds (NaN counts), guards changed, inputs changed."""
        failures, worst = [], 0.0
        for i, o in enumerate(self.outputs):
            out, ref, absref = self.observed(o)
            count, ratio, first = check_output(out, ref, absref, o.g.dtype, o.operand_dtype, o.rows, o.extra)
            worst = max(worst, ratio)
            if count:
                value = out[first].item()
                failures.append(f'output {i}: {count} elements out of bounds, first at {first}: got {value}, '
                                f'expected {ref[first].item():.6g}')
            changed = o.g.guard_changes()
            if changed:
                failures.append(f'output {i}: {changed} guard elements overwritten')
        for i, (g, before) in enumerate(zip(self.inputs, self.input_copies)):
            if not torch.equal(g.buffer.view(torch.uint8), before.view(torch.uint8)):
                failures.append(f'input {i}: changed by the call')
        self.worst = worst
        return failures


def _major_storage(logical_rows, logical_cols, major, dtype, device, pad):
    """A logical [rows, cols] (cols = K) operand stored K-major (rows of K) or MN-major: (Guarded, logical view)."""
    if major == 'k':
        g = Guarded((logical_rows, logical_cols), dtype, device, pad)
        return g, g.view
    g = Guarded((logical_cols, logical_rows), dtype, device, pad)
    return g, g.view.t()


class DenseBf16(Case):
    """bf16_gemm_{nt,nn,tn,tt} and cublaslt_gemm_*: d = c + a @ bᵀ with every storage order of a and b."""

    def __init__(self, p, device):
        super().__init__(p, device)
        m, n, k = p['m'], p['n'], p['k']
        self.ga, self.a = _major_storage(m, k, p['a_major'], torch.bfloat16, device, pad_of(p['pad_a'], torch.bfloat16))
        self.gb, self.b = _major_storage(n, k, p['b_major'], torch.bfloat16, device, pad_of(p['pad_b'], torch.bfloat16))
        d_dtype = TORCH_DTYPE[p['d_dtype']]
        self.gd = Guarded((m, n), d_dtype, device, pad_of(p['pad_d'], d_dtype))
        self.gc = Guarded((m, n), d_dtype, device) if p['c'] == 'separate' else None
        self.inputs = [g for g in (self.ga, self.gb, self.gc) if g is not None]
        self.outputs = [Output(self.gd, 'bf16')]

    def fill(self, seed):
        p, gen = self.p, self.gen(seed)
        self.a.copy_(self.rand(gen, self.a.shape))
        self.b.copy_(self.rand(gen, self.b.shape))
        c = None
        if p['c'] != 'none':
            c = self.rand(gen, (p['m'], p['n']), self.gd.dtype)
            if self.gc is not None:
                self.gc.view.copy_(c)
        out = self.outputs[0]
        out.in_place_c = c if p['c'] == 'in_place' else None
        a, b = self.a.double(), self.b.double()
        out.ref, out.absref = a @ b.T, a.abs() @ b.abs().T
        out.extra = None
        if c is not None:
            if self.gd.dtype == torch.bfloat16:
                # A bf16 d accumulates in place (DeepGEMM copies c into d first): a @ bᵀ is rounded to bf16 before
                # it is added to c, one more rounding of up to half an ulp of |a @ bᵀ|.
                out.extra = PRODUCT_ROUNDING * out.ref.abs()
            out.ref, out.absref = out.ref + c.double(), out.absref + c.double().abs()

    def call(self, dg):
        p = self.p
        a = self.a if p['layout'][0] == 'n' else self.a.t()
        b = self.b if p['layout'][1] == 't' else self.b.t()
        c = None if p['c'] == 'none' else self.gc.view if p['c'] == 'separate' else self.gd.view
        getattr(dg, function_name(p))(a, b, self.gd.view, c=c)


class DenseFp8(Case):
    """fp8_gemm_{nt,nn,tn,tt} (and the fp8_fp4_* names) with the 1D2D and 1D1D recipes."""

    def __init__(self, p, device):
        super().__init__(p, device)
        m, n, k = p['m'], p['n'], p['k']
        self.ga = Guarded((m, k), FP8, device, pad_of(p['pad_a'], FP8))
        self.gb = Guarded((n, k), FP8, device, pad_of(p['pad_b'], FP8))
        d_dtype = TORCH_DTYPE[p['d_dtype']]
        self.gd = Guarded((m, n), d_dtype, device, pad_of(p['pad_d'], d_dtype))
        self.gc = Guarded((m, n), d_dtype, device) if p['c'] == 'separate' else None
        self.sfa = self.sfb = None
        self.inputs = [g for g in (self.ga, self.gb, self.gc) if g is not None]
        self.outputs = [Output(self.gd, 'fp8')]

    def fill(self, seed):
        p, gen = self.p, self.gen(seed)
        m, n, k = p['m'], p['n'], p['k']
        a, sfa = cast_per_token(self.rand(gen, (m, k)))
        b, sfb = (cast_per_block if p['recipe'] == '1d2d' else cast_per_token)(self.rand(gen, (n, k)))
        if p['sfa_mn_major'] and self.device != 'cpu' and sfa.numel():
            import deep_gemm
            sfa = deep_gemm.get_mn_major_tma_aligned_tensor(sfa)
        self.ga.view.copy_(a)
        self.gb.view.copy_(b)
        self.keep_scales(sfa, sfb)
        c = None
        if p['c'] != 'none':
            c = self.rand(gen, (m, n), torch.float32)
            if self.gc is not None:
                self.gc.view.copy_(c)
        out = self.outputs[0]
        out.in_place_c = c if p['c'] == 'in_place' else None
        a64 = dequant_token(a, sfa)
        b64 = dequant_block(b, sfb) if p['recipe'] == '1d2d' else dequant_token(b, sfb)
        out.ref, out.absref = a64 @ b64.T, a64.abs() @ b64.abs().T
        if c is not None:
            out.ref, out.absref = out.ref + c.double(), out.absref + c.double().abs()

    def call(self, dg):
        p = self.p
        a, sfa = (self.ga.view, self.sfa) if p['layout'][0] == 'n' else (self.ga.view.t(), self.sfa.t())
        b, sfb = (self.gb.view, self.sfb) if p['layout'][1] == 't' else (self.gb.view.t(), self.sfb.t())
        c = None if p['c'] == 'none' else self.gc.view if p['c'] == 'separate' else self.gd.view
        kwargs = {} if p['recipe'] == '1d2d' else {'recipe': (1, 1, 128)}
        if p['recipe'] == '1d1d' and p['index'] % 2:
            kwargs = {'recipe_a': (1, 128), 'recipe_b': (1, 128)}
        getattr(dg, function_name(p))((a, sfa), (b, sfb), self.gd.view, c=c, **kwargs)


def _group_layout(rows):
    """DeepGEMM's contiguous layout: each group's rows, then -1 rows up to the next multiple of 128."""
    layout = []
    for g, r in enumerate(rows):
        layout += [g] * r + [-1] * (ceil_div(r, 128) * 128 - r)
    return layout


class MGrouped(Case):
    """m_grouped_{bf16,fp8}_gemm_{nt,nn}_contiguous: groups of rows, empty groups and padding rows included."""

    def __init__(self, p, device):
        super().__init__(p, device)
        dtype = self.dtype
        m, n, k, groups = p['m'], p['n'], p['k'], p['groups']
        self.ga = Guarded((m, k), dtype, device, pad_of(p['pad_a'], dtype))
        # nn: bf16 b stored [G, K, N]; FP8 reads K-major only, so its nn b is the transposed view of [G, N, K].
        self.b_mn_major = p['layout'] == 'nn' and not self.fp8
        self.gb = Guarded((groups, k, n) if self.b_mn_major else (groups, n, k), dtype, device)
        self.gd = Guarded((m, n), torch.bfloat16, device, pad_of(p['pad_d'], torch.bfloat16))
        layout = _group_layout(p['group_rows'])
        self.layout = torch.tensor(layout, dtype=torch.int32, device=device)
        self.sfa = self.sfb = None
        self.inputs = [self.ga, self.gb]
        self.outputs = [Output(self.gd, 'fp8' if self.fp8 else 'bf16')]
        self.outputs[0].rows = self.layout >= 0

    def fill(self, seed):
        p, gen = self.p, self.gen(seed)
        m, n, k, groups = p['m'], p['n'], p['k'], p['groups']
        x, w = self.rand(gen, (m, k)), self.rand(gen, (groups, n, k))
        if self.fp8:
            a, sfa = cast_per_token(x)
            b, sfb = cast_per_block_groups(w)
            self.keep_scales(sfa, sfb)
            a64, b64 = dequant_token(a, sfa), dequant_block(b, sfb)
        else:
            a, b = x, w
            a64, b64 = a.double(), b.double()
        self.ga.view.copy_(a)
        self.gb.view.copy_(b.transpose(1, 2) if self.b_mn_major else b)
        ref, absref = torch.zeros(m, n, dtype=torch.float64, device=self.device), None
        absref = torch.zeros_like(ref)
        group_of = self.layout.long()
        for g in range(groups):
            rows = group_of == g
            if rows.any():
                ref[rows] = a64[rows] @ b64[g].T
                absref[rows] = a64[rows].abs() @ b64[g].abs().T
        out = self.outputs[0]
        out.ref, out.absref = ref, absref

    def call(self, dg):
        p = self.p
        # nn takes b as [G, K, N]: bf16's storage itself, FP8's transposed view of its [G, N, K] storage.
        b = self.gb.view.transpose(1, 2) if p['layout'] == 'nn' and self.fp8 else self.gb.view
        if self.fp8:
            sfb = self.sfb.transpose(1, 2) if p['layout'] == 'nn' else self.sfb
            getattr(dg, function_name(p))((self.ga.view, self.sfa), (b, sfb), self.gd.view, self.layout)
        else:
            getattr(dg, function_name(p))(self.ga.view, b, self.gd.view, self.layout)


class Masked(Case):
    """m_grouped_{bf16,fp8}_gemm_nt_masked: rows below masked_m[g] of each group, masked_m = 0 included."""

    def __init__(self, p, device):
        super().__init__(p, device)
        dtype = self.dtype
        g, m_max, n, k = p['groups'], p['m_max'], p['n'], p['k']
        self.ga = Guarded((g, m_max, k), dtype, device, pad_of(p['pad_a'], dtype))
        self.gb = Guarded((g, n, k), dtype, device)
        self.gd = Guarded((g, m_max, n), torch.bfloat16, device)
        self.masked_m = torch.tensor(p['masked_m'], dtype=torch.int32, device=device)
        self.sfa = self.sfb = None
        self.inputs = [self.ga, self.gb]
        self.outputs = [Output(self.gd, 'fp8' if self.fp8 else 'bf16')]

    def fill(self, seed, masked_m=None):
        p, gen = self.p, self.gen(seed)
        g, m_max, n, k = p['groups'], p['m_max'], p['n'], p['k']
        if masked_m is not None:
            self.masked_m.copy_(torch.tensor(masked_m, dtype=torch.int32))
        x, w = self.rand(gen, (g, m_max, k)), self.rand(gen, (g, n, k))
        if self.fp8:
            a, sfa = cast_per_token(x.view(g * m_max, k))
            a, sfa = a.view(g, m_max, k), sfa.view(g, m_max, -1)
            b, sfb = cast_per_block_groups(w)
            self.keep_scales(sfa, sfb)
            a64, b64 = dequant_token(a, sfa), dequant_block(b, sfb)
        else:
            a, b = x, w
            a64, b64 = a.double(), b.double()
        self.ga.view.copy_(a)
        self.gb.view.copy_(b)
        out = self.outputs[0]
        out.ref, out.absref = a64 @ b64.transpose(1, 2), a64.abs() @ b64.abs().transpose(1, 2)
        rows = torch.arange(m_max, device=self.device).unsqueeze(0) < self.masked_m.long().unsqueeze(1)
        out.rows = rows

    def call(self, dg):
        p = self.p
        fn = getattr(dg, function_name(p))
        if self.fp8:
            fn((self.ga.view, self.sfa), (self.gb.view, self.sfb), self.gd.view, self.masked_m, p['expected_m'])
        else:
            fn(self.ga.view, self.gb.view, self.gd.view, self.masked_m, p['expected_m'])


class KGrouped(Case):
    """k_grouped_bf16_gemm_tn_contiguous and k_grouped_fp8_gemm_nt_contiguous: d[g] = c[g] + a_gᵀ-or-a_g @ ...
    over each group's K rows, empty groups (K = 0: d[g] = c[g] or 0) included."""

    def __init__(self, p, device):
        super().__init__(p, device)
        ks, m, n, g = p['ks'], p['m'], p['n'], p['groups']
        sum_k = sum(ks)
        if self.fp8:  # each group's K-major [mn, k_g] block after the previous group's, flat
            self.ga, self.gb = Guarded((sum_k * m, ), FP8, device), Guarded((sum_k * n, ), FP8, device)
        else:  # [ΣK, M] and [ΣK, N]
            self.ga = Guarded((sum_k, m), torch.bfloat16, device)
            self.gb = Guarded((sum_k, n), torch.bfloat16, device)
        self.gd = Guarded((g, m, n), torch.float32, device)
        self.gc = Guarded((g, m, n), torch.float32, device) if p['c'] == 'separate' else None
        self.ks_tensor = torch.tensor(ks, dtype=torch.int32, device=device)
        self.sfa = self.sfb = None
        self.inputs = [x for x in (self.ga, self.gb, self.gc) if x is not None]
        self.outputs = [Output(self.gd, 'fp8' if self.fp8 else 'bf16')]

    def fill(self, seed):
        p, gen = self.p, self.gen(seed)
        ks, m, n, g = p['ks'], p['m'], p['n'], p['groups']
        ref = torch.zeros(g, m, n, dtype=torch.float64, device=self.device)
        absref = torch.zeros_like(ref)
        a_parts, b_parts, sfa_parts, sfb_parts = [], [], [], []
        for i, k in enumerate(ks):
            x, y = self.rand(gen, (m, k)), self.rand(gen, (n, k))
            if self.fp8:
                (xa, xs), (ya, ys) = cast_per_token(x), cast_per_token(y)
                a_parts.append(xa.flatten())
                b_parts.append(ya.flatten())
                sfa_parts.append(xs)
                sfb_parts.append(ys)
                x64, y64 = dequant_token(xa, xs), dequant_token(ya, ys)
            else:
                a_parts.append(x.T)
                b_parts.append(y.T)
                x64, y64 = x.double(), y.double()
            ref[i], absref[i] = x64 @ y64.T, x64.abs() @ y64.abs().T
        self.ga.view.copy_(torch.cat(a_parts) if a_parts else self.ga.view)
        self.gb.view.copy_(torch.cat(b_parts) if b_parts else self.gb.view)
        if self.fp8:
            sfa = torch.cat(sfa_parts, dim=1) if sfa_parts else torch.ones(m, 0, device=self.device)
            sfb = torch.cat(sfb_parts, dim=1) if sfb_parts else torch.ones(n, 0, device=self.device)
            self.keep_scales(sfa, sfb)
        c = None
        if p['c'] != 'none':
            c = self.rand(gen, (g, m, n), torch.float32)
            if self.gc is not None:
                self.gc.view.copy_(c)
            ref, absref = ref + c.double(), absref + c.double().abs()
        out = self.outputs[0]
        out.ref, out.absref = ref, absref
        out.in_place_c = c if p['c'] == 'in_place' else None

    def call(self, dg):
        p = self.p
        c = None if p['c'] == 'none' else self.gc.view if p['c'] == 'separate' else self.gd.view
        fn = getattr(dg, function_name(p))
        if self.fp8:
            fn((self.ga.view, self.sfa), (self.gb.view, self.sfb), self.gd.view, list(p['ks']), self.ks_tensor, c=c)
        else:
            fn(self.ga.view, self.gb.view, self.gd.view, list(p['ks']), self.ks_tensor, c=c)


class Einsum(Case):
    """einsum / fp8_einsum('bhr,hdr->bhd'): a batched GEMM over the h dimension of strided views (FP8: per-token
    a scales [b, h, ceil(r/128)], per-block b scales [h, ceil(d/128), ceil(r/128)])."""

    def __init__(self, p, device):
        super().__init__(p, device)
        dtype = self.dtype
        b, h, d, r = p['b'], p['h'], p['d'], p['r']
        self.ga = Guarded((b, h, r), dtype, device)
        self.gb = Guarded((h, d, r), dtype, device)
        self.gd = Guarded((b, h, d), torch.bfloat16, device)
        self.sfa = self.sfb = None
        self.inputs, self.outputs = [self.ga, self.gb], [Output(self.gd, 'fp8' if self.fp8 else 'bf16')]

    def fill(self, seed):
        p, gen = self.p, self.gen(seed)
        b, h, r = p['b'], p['h'], p['r']
        x, w = self.rand(gen, self.ga.shape), self.rand(gen, self.gb.shape)
        if self.fp8:
            xa, xs = cast_per_token(x.view(b * h, r))
            wa, ws = cast_per_block_groups(w)
            xa, xs = xa.view(b, h, r), xs.view(b, h, -1)
            self.keep_scales(xs, ws)
            a64, b64 = dequant_token(xa, xs), dequant_block(wa, ws)
            x, w = xa, wa
        else:
            a64, b64 = x.double(), w.double()
        self.ga.view.copy_(x)
        self.gb.view.copy_(w)
        out = self.outputs[0]
        out.ref = torch.einsum('bhr,hdr->bhd', a64, b64)
        out.absref = torch.einsum('bhr,hdr->bhd', a64.abs(), b64.abs())

    def call(self, dg):
        fn = getattr(dg, function_name(self.p))
        if self.fp8:
            fn('bhr,hdr->bhd', (self.ga.view, self.sfa), (self.gb.view, self.sfb), self.gd.view)
        else:
            fn('bhr,hdr->bhd', self.ga.view, self.gb.view, self.gd.view)


class SkipHeadMid(Case):
    """fp8_gemm_nt_skip_head_mid: the 1D2D GEMM into d heads of left + mid + right columns; the head parts are held to
    the reference, the mid columns must keep the poison prepare() wrote (as the guards do)."""

    def __init__(self, p, device):
        super().__init__(p, device)
        m, n, k = p['m'], p['n'], p['k']
        left, mid, right = p['head_splits']
        width = n + n // (left + right) * mid
        self.ga = Guarded((m, k), FP8, device, pad_of(p['pad_a'], FP8))
        self.gb = Guarded((n, k), FP8, device)
        self.gd = Guarded((m, width), torch.bfloat16, device, pad_of(p['pad_d'], torch.bfloat16))
        column = torch.arange(width, device=device) % (left + mid + right)
        self.written = (column < left) | (column >= left + mid)  # d's columns the GEMM writes, in GEMM order
        self.sfa = self.sfb = None
        self.inputs, self.outputs = [self.ga, self.gb], [Output(self.gd, 'fp8')]
        self.outputs[0].rows = self.written.expand(m, width)  # an element mask: only head parts are compared

    def fill(self, seed):
        p, gen = self.p, self.gen(seed)
        m, n, k = p['m'], p['n'], p['k']
        a, sfa = cast_per_token(self.rand(gen, (m, k)))
        b, sfb = cast_per_block(self.rand(gen, (n, k)))
        self.ga.view.copy_(a)
        self.gb.view.copy_(b)
        self.keep_scales(sfa, sfb)
        a64, b64 = dequant_token(a, sfa), dequant_block(b, sfb)
        out = self.outputs[0]
        out.ref = torch.zeros(self.gd.shape, dtype=torch.float64, device=self.device)
        out.absref = torch.zeros_like(out.ref)
        out.ref[:, self.written], out.absref[:, self.written] = a64 @ b64.T, a64.abs() @ b64.abs().T

    def call(self, dg):
        dg.fp8_gemm_nt_skip_head_mid((self.ga.view, self.sfa), (self.gb.view, self.sfb), self.gd.view,
                                     tuple(self.p['head_splits']))

    def check(self):
        failures = super().check()
        int_dtype, value = POISON[torch.bfloat16]
        changed = int((self.gd.view.view(int_dtype)[:, ~self.written] != value).sum())
        if changed:
            failures.append(f'output 0: {changed} mid-column elements overwritten')
        return failures


class HcPrenorm(Case):
    """tf32_hc_prenorm_gemm: d = a @ bᵀ with TF32 products (a bf16 [M, K], b fp32 [N, K], N in {8, 16, 24, 32}) and
    sqr_sum = Σ_k a², both fp32. With num_splits = S, d [S, M, N] and sqr_sum [S, M] hold per-split partial sums:
    the check adds the slices (in float64) before it compares, so a slice left unwritten (poison: NaN), a K block
    counted twice or never fails as a wrong value would. A split output's references hold the whole sum in slice 0
    and zeros in the others (the slices the stand-ins write). Bounds: |d - ref| <= 2^-10 (TF32) of Σ_k |a·b| plus
    the fp32 rounding of d and FP32_TINY; sqr_sum within 1e-5 of the sum (plus its fp32 rounding)."""

    def __init__(self, p, device):
        super().__init__(p, device)
        m, n, k, splits = p['m'], p['n'], p['k'], p['num_splits']
        lead = () if splits is None else (splits, )
        self.ga = Guarded((m, k), torch.bfloat16, device, pad_of(p['pad_a'], torch.bfloat16))
        self.gb = Guarded((n, k), torch.float32, device, pad_of(p['pad_b'], torch.float32))
        self.gd = Guarded(lead + (m, n), torch.float32, device, pad_of(p['pad_d'], torch.float32))
        self.gs = Guarded(lead + (m, ), torch.float32, device)  # contiguous, as the contract asks
        self.inputs = [self.ga, self.gb]
        self.outputs = [Output(self.gd, 'tf32'), Output(self.gs, 'sqr_sum')]
        self.outputs[0].extra = FP32_TINY

    def fill(self, seed):
        gen = self.gen(seed)
        self.ga.view.copy_(self.rand(gen, self.ga.shape))
        self.gb.view.copy_(self.rand(gen, self.gb.shape, torch.float32))  # full fp32 mantissas: TF32 drops bits
        a, b = self.ga.view.double(), self.gb.view.double()
        d, s = self.outputs
        d.ref, d.absref = a @ b.T, a.abs() @ b.abs().T
        s.ref = s.absref = (a * a).sum(-1)
        if self.p['num_splits'] is not None:
            for o in self.outputs:
                ref, absref = (torch.zeros(o.g.shape, dtype=torch.float64, device=self.device) for _ in range(2))
                ref[0], absref[0] = o.ref, o.absref
                o.ref, o.absref = ref, absref

    def observed(self, o):
        if self.p['num_splits'] is None:
            return super().observed(o)
        return o.g.view.double().sum(0), o.ref.sum(0), o.absref.sum(0)

    def call(self, dg):
        dg.tf32_hc_prenorm_gemm(self.ga.view, self.gb.view, self.gd.view, self.gs.view,
                                num_splits=self.p['num_splits'])


class WeightOnly(Case):
    """deep_gemm.weight_quant.gemm: d = a @ Wᵀ with W packed as int4 / int8 / MXFP4 (random codes, scales of either
    sign, MXFP4 exponents around 2^-4). The packed weight is remade on every fill and copied into the arrays the call
    (and a captured graph) reads; the reference is the exact float64 W. Bound: D's rounding plus 2^-8 of
    Σ_k |a·w| (W decoded to 16 bits)."""

    def __init__(self, p, device):
        super().__init__(p, device)
        m, n, k = p['m'], p['n'], p['k']
        self.act = TORCH_DTYPE[p['act']]
        self.ga = Guarded((m, k), self.act, device, pad_of(p['pad_a'], self.act))
        d_dtype = TORCH_DTYPE[p['d_dtype']]
        self.gd = Guarded((m, n), d_dtype, device, pad_of(p['pad_d'], d_dtype))
        self.inputs = [self.ga]
        self.outputs = [Output(self.gd, 'wq')]
        self.outputs[0].extra = FP32_TINY
        self.w = None

    def _pack(self, seed):
        import deep_gemm.weight_quant as wq
        p, gen = self.p, torch.Generator().manual_seed(seed)
        n, k = p['n'], p['k']
        if p['format'] == 'int4':
            groups = k // p['group_size']
            q = torch.randint(0, 16, (n, k), dtype=torch.uint8, generator=gen)
            scales = ((torch.rand((n, groups), generator=gen) + 0.5) * 2**-6 *
                      (torch.randint(0, 2, (n, groups), generator=gen) * 2 - 1)).to(self.act)
            zeros = torch.randint(0, 16, (n, groups), dtype=torch.uint8, generator=gen) if p['zeros'] else None
            return wq.pack_int4(q, scales, zeros)
        if p['format'] == 'int8':
            q = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=gen)
            return wq.pack_int8(q, (torch.rand(n, generator=gen) + 0.5) * 2**-9, act_dtype=self.act)
        blocks = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, generator=gen)
        exponents = torch.randint(120, 127, (n, ceil_div(k, 32)), dtype=torch.uint8, generator=gen)
        return wq.pack_mxfp4(blocks, exponents)

    def fill(self, seed):
        import deep_gemm.weight_quant as wq
        self.ga.view.copy_(self.rand(self.gen(seed), self.ga.shape, self.act))
        w = self._pack(seed)
        if self.w is None:
            self.w = w.to(self.device)
        else:  # the same memory, as a captured graph reads it
            for name, t in self.w._arrays().items():
                if t is not None:
                    t.copy_(getattr(w, name))
        weight = wq.reference_weight(w).to(self.device)
        a = self.ga.view.double()
        d = self.outputs[0]
        d.ref, d.absref = a @ weight.T, a.abs() @ weight.abs().T

    def call(self, dg):
        import deep_gemm.weight_quant as wq
        wq.gemm(self.ga.view, self.w, self.gd.view)


class Int8(Case):
    """deep_gemm.int8.gemm_nt: d = scale_a[m] · scale_b[n] · Σ a·b with int8 a and b over the whole range and fp32
    scales of either sign; the reference is exact in float64. Bound: D's rounding plus 2^-20 of the scaled Σ |a·b|."""

    def __init__(self, p, device):
        super().__init__(p, device)
        m, n, k = p['m'], p['n'], p['k']
        self.ga = Guarded((m, k), torch.int8, device, pad_of(p['pad_a'], torch.int8))
        self.gb = Guarded((n, k), torch.int8, device, pad_of(p['pad_b'], torch.int8))
        self.gsa, self.gsb = Guarded((m, ), torch.float32, device), Guarded((n, ), torch.float32, device)
        self.gd = Guarded((m, n), torch.bfloat16, device, pad_of(p['pad_d'], torch.bfloat16))
        self.inputs = [self.ga, self.gb, self.gsa, self.gsb]
        self.outputs = [Output(self.gd, 'int8')]
        self.outputs[0].extra = FP32_TINY

    def fill(self, seed):
        gen = self.gen(seed)
        for g in (self.ga, self.gb):
            g.view.copy_(torch.randint(-128, 128, g.shape, generator=gen, device=self.device, dtype=torch.int8))
        for g in (self.gsa, self.gsb):
            g.view.copy_(self.rand(gen, g.shape, torch.float32) * 2**-10)
        a, b = self.ga.view.double(), self.gb.view.double()
        scale = self.gsa.view.double()[:, None] * self.gsb.view.double()[None, :]
        d = self.outputs[0]
        d.ref, d.absref = (a @ b.T) * scale, (a.abs() @ b.abs().T) * scale.abs()

    def call(self, dg):
        import deep_gemm.int8 as i8
        i8.gemm_nt(self.ga.view, self.gb.view, self.gsa.view, self.gsb.view, out=self.gd.view)


def build_case(p, device):
    kind = p['kind']
    cls = (DenseBf16 if kind in ('dense_bf16', 'cublaslt') else DenseFp8 if kind == 'dense_fp8' else
           MGrouped if kind.startswith('m_grouped') else Masked if kind.startswith('masked') else
           KGrouped if kind.startswith('k_grouped') else SkipHeadMid if kind == 'skip_head_mid' else
           HcPrenorm if kind == 'hc_prenorm' else WeightOnly if kind == 'weight_quant' else
           Int8 if kind == 'int8' else Einsum)
    return cls(p, device)
