"""deep_gemm.precompile on the GPU machine (GPU + torch; skipped otherwise): after precompiling, a new process with
compiling forbidden (set_jit_compile(False)) makes real calls of every precompiled kind and they all run, correct;
a call that was not precompiled raises RuntimeError naming DG_JIT_DISABLE."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')

PRECOMPILE = '''
import deep_gemm
deep_gemm.precompile('fp8_gemm_nt', m=[1, 100, 4096], n=2112, k=7168, progress=False)
deep_gemm.precompile('fp8_gemm_nt', m=[1, 100, 4096], n=2112, k=7168, sf_layout='row-major', progress=False)
deep_gemm.precompile('bf16_gemm_nt', m=[1, 100, 4096], n=2112, k=7168, progress=False)
deep_gemm.precompile('m_grouped_fp8_gemm_nt_contiguous', m=1024, n=4096, k=7168, num_groups=4, progress=False)
deep_gemm.precompile('m_grouped_fp8_gemm_nt_masked', m=256, n=4096, k=7168, num_groups=4, expected_m=[32, 256],
                     progress=False)
deep_gemm.precompile('k_grouped_fp8_gemm_nt_contiguous', m=512, n=1024, k=[512, 1024], accumulate=True, progress=False)
deep_gemm.precompile('fp8_gemm_nt_skip_head_mid', m=[1, 100, 4096], n=4 * 192, k=7168, head_splits=(128, 64, 64),
                     progress=False)
deep_gemm.precompile('tf32_hc_prenorm_gemm', m=[1, 100, 4096], n=24, k=7168, progress=False)
deep_gemm.precompile('tf32_hc_prenorm_gemm', m=[1, 100, 4096], n=24, k=7168, num_splits=16, progress=False)
'''

CALLS = '''
import json, torch, deep_gemm
from deep_gemm.testing import calc_diff
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
deep_gemm.set_jit_compile(False)
rand = lambda *s: torch.randn(*s, device='cuda', dtype=torch.bfloat16)
token = lambda x: per_token_cast_to_fp8(x, use_ue8m0=False)
block = lambda x: per_block_cast_to_fp8(x, use_ue8m0=False)
diffs = {}
w = rand(2112, 7168)
for m in (1, 100, 4096):
    x = rand(m, 7168)
    ref = x.float() @ w.float().T
    d = torch.empty(m, 2112, device='cuda', dtype=torch.bfloat16)
    a = token(x)
    deep_gemm.fp8_gemm_nt((a[0], deep_gemm.get_mn_major_tma_aligned_tensor(a[1])), block(w), d)
    diffs[f'fp8 mn-major {m}'] = float(calc_diff(d.float(), ref))
    deep_gemm.fp8_gemm_nt(a, block(w), d)
    diffs[f'fp8 row-major {m}'] = float(calc_diff(d.float(), ref))
    deep_gemm.bf16_gemm_nt(x, w, d)
    diffs[f'bf16 {m}'] = float(calc_diff(d.float(), ref))
ws = rand(4, 4096, 7168)
wq = [block(ws[g]) for g in range(4)]
wq = torch.stack([q[0] for q in wq]), torch.stack([q[1] for q in wq])
x = rand(1024, 7168)
rows = torch.arange(1024, device='cuda', dtype=torch.int32) // 256
d = torch.empty(1024, 4096, device='cuda', dtype=torch.bfloat16)
a = token(x)
deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a[0], deep_gemm.get_mn_major_tma_aligned_tensor(a[1])), wq, d, rows)
ref = torch.cat([x[256 * g:256 * (g + 1)].float() @ ws[g].float().T for g in range(4)])
diffs['m-grouped'] = float(calc_diff(d.float(), ref))
xm = rand(4, 256, 7168)
am = [token(xm[g]) for g in range(4)]
am = torch.stack([q[0] for q in am]), deep_gemm.get_mn_major_tma_aligned_tensor(torch.stack([q[1] for q in am]))
for expected in (32, 256):
    dm = torch.empty(4, 256, 4096, device='cuda', dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_masked(am, wq, dm, torch.full((4, ), expected, dtype=torch.int32,
                                                                  device='cuda'), expected)
    diffs[f'masked {expected}'] = float(calc_diff(dm[:, :expected].float(),
                                                  torch.einsum('gmk,gnk->gmn', xm[:, :expected].float(),
                                                               ws.float())))
ks = [512, 1024]
xa, xb = [rand(512, k) for k in ks], [rand(1024, k) for k in ks]
qa, qb = [token(t) for t in xa], [token(t) for t in xb]
a = torch.cat([q[0].flatten() for q in qa]), torch.cat([q[1] for q in qa], dim=1)
b = torch.cat([q[0].flatten() for q in qb]), torch.cat([q[1] for q in qb], dim=1)
dk = torch.zeros(2, 512, 1024, device='cuda')
deep_gemm.k_grouped_fp8_gemm_nt_contiguous(a, b, dk, ks, torch.tensor(ks, dtype=torch.int32, device='cuda'), c=dk)
diffs['k-grouped'] = float(calc_diff(dk, torch.stack([p.float() @ q.float().T for p, q in zip(xa, xb)])))
wh = rand(4 * 192, 7168)
for m in (1, 100, 4096):
    x = rand(m, 7168)
    a = token(x)
    dh = torch.zeros(m, 4, 256, device='cuda', dtype=torch.bfloat16)
    deep_gemm.fp8_gemm_nt_skip_head_mid((a[0], deep_gemm.get_mn_major_tma_aligned_tensor(a[1])), block(wh),
                                        dh.view(m, 4 * 256), (128, 64, 64))
    ref = (x.float() @ wh.float().T).view(m, 4, 192)
    got = torch.cat([dh[..., :128], dh[..., 192:]], dim=-1).float()
    diffs[f'skip_head_mid {m}'] = float(calc_diff(got, ref))
    bh = torch.randn(24, 7168, device='cuda')
    ref, ref_sqr = x.float() @ bh.T, (x.float() ** 2).sum(-1)
    dh, sqr = torch.empty(m, 24, device='cuda'), torch.empty(m, device='cuda')
    deep_gemm.tf32_hc_prenorm_gemm(x, bh, dh, sqr)
    diffs[f'hc_prenorm {m}'] = max(float(calc_diff(dh, ref)), float(calc_diff(sqr, ref_sqr)))
    dh, sqr = torch.empty(16, m, 24, device='cuda'), torch.empty(16, m, device='cuda')
    deep_gemm.tf32_hc_prenorm_gemm(x, bh, dh, sqr, num_splits=16)
    diffs[f'hc_prenorm 16 splits {m}'] = max(float(calc_diff(dh.sum(0), ref)), float(calc_diff(sqr.sum(0), ref_sqr)))
try:
    deep_gemm.bf16_gemm_nt(rand(64, 256), rand(8192, 256), torch.empty(64, 8192, device='cuda',
                                                                       dtype=torch.bfloat16))
    refused = ''
except RuntimeError as e:
    refused = str(e)
torch.cuda.synchronize()
print(json.dumps({'diffs': diffs, 'refused': refused}))
'''


def test_precompiled_calls_compile_nothing_and_others_are_refused(tmp_path):
    env = dict(os.environ, DG_JIT_CACHE_DIR=str(tmp_path))
    env.pop('DG_JIT_DISABLE', None)
    first = subprocess.run([sys.executable, '-c', PRECOMPILE], capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, '-c', CALLS], capture_output=True, text=True, env=env, timeout=600)
    assert second.returncode == 0, second.stderr
    got = json.loads(second.stdout)
    bad = {name: diff for name, diff in got['diffs'].items() if not diff < 1e-3}
    assert len(got['diffs']) == 22 and not bad, got['diffs']
    assert 'DG_JIT_DISABLE' in got['refused'], got['refused']
