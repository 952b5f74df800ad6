"""The layout suite: DeepGEMM's scale-layout helpers on fp32 scales of 1 MB and more, in GB/s (bytes read plus
bytes written, over the time), against a device-to-device copy of as many bytes as the helper reads."""
from . import stats
from .measure import Entry, Problem, absent
from .peer import lookup
from .inputs import seed_for

TMA_ALIGNMENT = 16  # bytes: the MN extent of an MN-major scale tensor is padded to a multiple of this


def _ceil_div(x, y):
    return (x + y - 1) // y


def aligned_mn(mn, element_size=4):
    step = TMA_ALIGNMENT // element_size
    return _ceil_div(mn, step) * step


def layout_bytes(case):
    """(bytes read, bytes written) of one helper call on the case's scales (fp32 in, fp32 or packed int32 out)."""
    kb = _ceil_div(case.k, 128)
    if case.helper == 'get_mn_major_tma_aligned_tensor':
        n = case.groups * case.mn * kb * 4
        return n, n
    if case.helper == 'get_mn_major_tma_aligned_packed_ue8m0_tensor':
        return case.groups * case.mn * kb * 4, case.groups * case.mn * _ceil_div(kb, 4) * 4
    # K-grouped: case.groups groups of case.k rows each, scales [Σk / 128, mn], packed 4 per int32 along K
    return case.groups * kb * case.mn * 4, case.groups * _ceil_div(kb, 4) * case.mn * 4


def _ue8m0(torch, shape):
    """Random powers of two as fp32 (what UE8M0 scales hold)."""
    return torch.exp2(torch.randint(-20, 20, shape, device='cuda').float())


def _pack_rows(torch, sf):
    """UE8M0 exponents of fp32 powers of two [..., n, c], packed four per int32 along c (zero-padded)."""
    exponents = ((sf.view(torch.int32) >> 23) & 0xFF).to(torch.uint8)
    padded = torch.zeros(sf.shape[:-1] + (_ceil_div(sf.shape[-1], 4) * 4, ), dtype=torch.uint8, device='cuda')
    padded[..., :sf.shape[-1]] = exponents
    return padded.view(torch.int32)


def _mn_major(out, mn, groups):
    strides = out.stride()
    expected = (1, aligned_mn(mn))
    ok = tuple(strides[-2:]) == expected and (groups == 1 or strides[0] == aligned_mn(mn) * out.shape[-1])
    return ok, None if ok else f'strides {tuple(strides)}: expected MN-major {expected} (TMA-aligned MN)'


def _verifier(torch, reference, mn, groups, check_strides=True):
    def verify(out):
        if tuple(out.shape) != tuple(reference.shape) or not torch.equal(out, reference):
            return False, f'values or shape {tuple(out.shape)} differ from the reference {tuple(reference.shape)}'
        return _mn_major(out, mn, groups) if check_strides else (True, None)
    return verify


def problem(ctx, case):
    torch = ctx.torch
    torch.manual_seed(seed_for(ctx.seed, f'{case.helper} {case.name}'))
    kb = _ceil_div(case.k, 128)
    lead = (case.groups, ) if case.groups > 1 else ()
    if case.helper == 'get_mn_major_tma_aligned_tensor':
        sf = torch.rand(lead + (case.mn, kb), device='cuda') + 0.5
        args, verify = (sf, ), _verifier(torch, sf, case.mn, case.groups)
    elif case.helper == 'get_mn_major_tma_aligned_packed_ue8m0_tensor':
        sf = _ue8m0(torch, lead + (case.mn, kb))
        args, verify = (sf, ), _verifier(torch, _pack_rows(torch, sf), case.mn, case.groups)
    else:
        ks = [case.k] * case.groups
        sf = _ue8m0(torch, (case.groups * kb, case.mn))
        layout = torch.tensor(ks, dtype=torch.int32, device='cuda')
        reference = torch.cat([_pack_rows(torch, sf[g * kb:(g + 1) * kb].t()).t() for g in range(case.groups)])
        args, verify = (sf, layout, ks, 128, 128), _verifier(torch, reference, case.mn, 1, check_strides=False)
    entries = {}
    for key, module in ctx.libs.items():
        f = lookup(module, case.helper)
        entries[key] = absent(case.helper) if f is None else Entry(fn=(lambda f: lambda: f(*args))(f), verify=verify)
    read, written = layout_bytes(case)
    src = torch.randint(0, 256, (read, ), dtype=torch.uint8, device='cuda')
    dst = torch.empty_like(src)
    entries['copy'] = Entry(fn=lambda: dst.copy_(src), label='dst.copy_(src)',
                            verify=lambda out: (bool(torch.equal(out, src)), None))
    return Problem(f'{case.helper} {case.name}', entries, num_bytes=read + written,
                   params={'helper': case.helper, 'mn': case.mn, 'k': case.k, 'kb': kb, 'groups': case.groups,
                           'bytes_read': read, 'bytes_written': written, 'copy_bytes': 2 * read})


def add_bandwidth(row):
    """GB/s of each library (bytes read + written over its time) and of the copy (2x the bytes it copies), and
    each library's bandwidth as a fraction of the copy's."""
    params = row['params']
    copy = row['results'].get('copy', {})
    copy_gbps = stats.gbps(params['copy_bytes'], copy.get('us')) if copy.get('status') == 'ok' else None
    row['copy_gbps'] = copy_gbps
    for key in ('ours', 'deepgemm'):
        result = row['results'].get(key)
        gbps = stats.gbps(row['bytes'], result.get('us')) if result and result['status'] == 'ok' else None
        row[f'{key}_gbps'] = gbps
        row[f'{key}_vs_copy'] = None if gbps is None or not copy_gbps else gbps / copy_gbps
    return row
