"""tf32_hc_prenorm_gemm: every bad argument named (stand-in tensors, no torch or GPU needed), and on a GPU the
results of DeepGEMM's test shapes (and M = 1 to 17, where a CTA takes 16 rows) against a float64 reference, with and
without the caller's splits.

The reference is A (bf16, exact in TF32) times B rounded to TF32 as the kernel rounds it (nearest, ties away from
zero), in float64: only the fp32 summation differs, so the bar (1e-9) is ten times below DeepGEMM's calc_diff < 1e-8
against torch's TF32 matmul (which at M = 1 runs a GEMV in full fp32 and misses that bar by itself).
"""
import pytest

import deep_gemm
from conftest import FakeTensor as T, bf16, f32, gpu_available, raises

fn = deep_gemm.tf32_hc_prenorm_gemm


def tf32_rna(torch, x):
    """fp32 x rounded to TF32's 10 mantissa bits, to nearest with ties away from zero (cvt.rna.tf32.f32): add half
    of the dropped 13 bits to the magnitude, then clear them."""
    bits = x.view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def args(m=64, n=24, k=256, splits=None, **over):
    d = f32(m, n) if splits is None else f32(splits, m, n)
    s = f32(m) if splits is None else f32(splits, m)
    out = dict(a=bf16(m, k), b=f32(n, k), d=d, sqr_sum=s)
    out.update(over)
    return out


def test_types_are_named():
    raises(TypeError, 'a', fn, **args(a=[[1.0]]))
    raises(TypeError, 'sqr_sum', fn, **args(sqr_sum=None))
    raises(TypeError, 'num_splits', fn, **args(), num_splits=2.0)
    raises(ValueError, 'num_splits', fn, **args(), num_splits=0)


@pytest.mark.skipif(gpu_available(), reason='the library checks shapes only after a GPU run would start')
def test_library_checks_name_the_argument():
    assert 'bf16' in raises(ValueError, 'a', fn, **args(a=f32(64, 256)))
    assert 'K as a' in raises(ValueError, 'b', fn, **args(b=f32(24, 128)))
    assert '8, 16, 24 or 32' in raises(ValueError, 'b', fn, **args(n=20))
    raises(ValueError, 'd', fn, **args(d=f32(64, 16)))
    # With num_splits, D is [S, M, N] and sqr_sum [S, M].
    raises(ValueError, 'd', fn, **args(), num_splits=4)
    raises(ValueError, 'sqr_sum', fn, **args(splits=4, sqr_sum=f32(64)), num_splits=4)
    assert 'contiguous' in raises(ValueError, 'sqr_sum', fn, **args(sqr_sum=T((64, ), 'float32', strides=(2, ))))
    assert 'N contiguous' in raises(ValueError, 'd', fn, **args(d=T((64, 24), 'float32', strides=(1, 64))))
    assert '16-byte' in raises(ValueError, 'b', fn, **args(b=T((24, 256), 'float32', ptr=0x7F0000000004)))


@pytest.mark.skipif(gpu_available(), reason='checks the no-GPU message')
def test_without_a_gpu_the_call_says_so():
    with pytest.raises(RuntimeError, match='GPU'):
        fn(**args())


def test_empty_m_is_a_no_op():
    fn(**args(m=0))


class TestOnGpu:
    torch = pytest.importorskip('torch', reason='GPU tests need torch')

    @pytest.fixture(autouse=True)
    def _gpu(self):
        if not gpu_available():
            pytest.skip('no CUDA GPU')

    @pytest.mark.parametrize('m', [1, 13, 16, 17, 137, 4096])  # 16-row blocks up to 16, 64-row ones from 17
    @pytest.mark.parametrize('n,k', [(24, 28672), (24, 7168), (8, 1000), (32, 7680)])
    @pytest.mark.parametrize('num_splits', [None, 16])
    def test_against_torch_tf32(self, m, n, k, num_splits):
        torch = self.torch
        from deep_gemm.testing import calc_diff
        a = torch.randn((m, k), dtype=torch.bfloat16, device='cuda')
        b = torch.randn((n, k), dtype=torch.float, device='cuda')
        shape = (m, n) if num_splits is None else (num_splits, m, n)
        d = torch.full(shape, float('nan'), device='cuda')
        s = torch.full(shape[:-1], float('nan'), device='cuda')
        fn(a, b, d, s, num_splits=num_splits)
        final_d, final_s = (d, s) if num_splits is None else (d.sum(0), s.sum(0))
        ref_d, ref_s = a.double() @ tf32_rna(torch, b).double().T, a.double().square().sum(-1)
        diff = max(float(calc_diff(final_d.double(), ref_d)), float(calc_diff(final_s.double(), ref_s)))
        print(f'calc_diff {diff:.3g}')
        assert diff < 1e-9
        # Run twice on the same stream: the in-kernel split's counters are back at zero after each call.
        d2, s2 = torch.empty_like(d), torch.empty_like(s)
        fn(a, b, d2, s2, num_splits=num_splits)
        assert torch.equal(d, d2) and torch.equal(s, s2)

    def test_each_shape_chooses_and_prints_its_split_once(self):
        """The configuration is kept per shape: DG_PRINT_CONFIGS prints one line per shape however many calls."""
        import os
        import subprocess
        import sys
        code = """
import torch, deep_gemm
for m in (5, 5, 7, 5):
    a = torch.randn((m, 1024), dtype=torch.bfloat16, device='cuda')
    b = torch.randn((8, 1024), dtype=torch.float, device='cuda')
    deep_gemm.tf32_hc_prenorm_gemm(a, b, torch.empty((m, 8), device='cuda'), torch.empty((m, ), device='cuda'))
torch.cuda.synchronize()
"""
        out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=600,
                             env=dict(os.environ, DG_PRINT_CONFIGS='1'))
        assert out.returncode == 0, out.stderr
        lines = [line for line in out.stderr.splitlines() if line.startswith('tf32_hc_prenorm_gemm ')]
        assert [line.split(' -> ')[0] for line in lines] == ['tf32_hc_prenorm_gemm m=5 n=8 k=1024',
                                                             'tf32_hc_prenorm_gemm m=7 n=8 k=1024'], out.stderr
