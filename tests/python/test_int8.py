"""deep_gemm.int8 without a GPU: quantize and reference against direct arithmetic, the module kept out of
``import deep_gemm``, and gemm_nt's checks (Python's, then the library's) naming the argument before the missing GPU is
reported."""
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch', reason='deep_gemm.int8 takes torch tensors')

import deep_gemm.int8 as i8  # noqa: E402
from conftest import FakeTensor, gpu_available, raises  # noqa: E402


def test_import_deep_gemm_does_not_load_the_module():
    code = 'import sys, deep_gemm; print("deep_gemm.int8" in sys.modules, hasattr(deep_gemm, "int8_gemm_nt"))'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ['False', 'False']


@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.float16, torch.float32])
def test_quantize_rounds_each_row_to_its_absmax_scale(dtype):
    torch.manual_seed(0)
    x = (torch.randn(37, 96) * torch.logspace(-3, 3, 37)[:, None]).to(dtype)
    x[5] = 0  # an all-zero row keeps scale 1 and codes 0
    q, s = i8.quantize(x)
    assert q.dtype == torch.int8 and s.dtype == torch.float32 and s.shape == (37, )
    x32 = x.float()
    absmax = x32.abs().amax(dim=1)
    nonzero = absmax > 0
    assert torch.equal(s[nonzero], absmax[nonzero] / 127) and s[5] == 1 and not q[5].any()
    assert q.abs().max() == 127 and (q.abs().amax(dim=1)[nonzero] == 127).all()
    # Round to nearest: every element within half a step of its row.
    err = (q.float() * s[:, None] - x32).abs()
    assert (err <= s[:, None] * (0.5 + 1e-4)).all()  # (plus the fp32 rounding of x / s and q * s)


def test_quantize_names_bad_input():
    raises(TypeError, 'x', i8.quantize, None)
    raises(ValueError, 'x', i8.quantize, torch.zeros(4, dtype=torch.float32))
    raises(ValueError, 'x', i8.quantize, torch.zeros(4, 4, dtype=torch.int8))


def test_reference_is_the_scaled_integer_sum():
    g = torch.Generator().manual_seed(1)
    a = torch.randint(-128, 128, (5, 48), generator=g, dtype=torch.int8)
    b = torch.randint(-128, 128, (7, 48), generator=g, dtype=torch.int8)
    sa, sb = torch.rand(5, generator=g) + 0.5, torch.rand(7, generator=g) + 0.5
    ref = i8.reference(a, b, sa[:, None], sb[None, :])
    for m in range(5):
        for n in range(7):
            exact = sum(int(a[m, k]) * int(b[n, k]) for k in range(48))
            assert ref[m, n].item() == pytest.approx(float(sa[m]) * float(sb[n]) * exact, rel=1e-15)


def _args(m=4, n=24, k=64, **over):
    args = dict(a=FakeTensor((m, k), 'int8'), b=FakeTensor((n, k), 'int8'), scale_a=FakeTensor((m, ), 'float32'),
                scale_b=FakeTensor((n, ), 'float32'), out=FakeTensor((m, n), 'bfloat16'))
    args.update(over)
    return args


def test_gemm_nt_names_bad_arguments_before_anything_runs():
    raises(TypeError, 'a', i8.gemm_nt, **_args(a=FakeTensor((4, 64), 'bfloat16')))
    raises(TypeError, 'b', i8.gemm_nt, **_args(b=FakeTensor((24, 64), 'float8_e4m3fn')))
    raises(TypeError, 'out', i8.gemm_nt, **_args(out=FakeTensor((4, 24), 'float32')))
    raises(TypeError, 'scale_a', i8.gemm_nt, **_args(scale_a=FakeTensor((4, ), 'bfloat16')))
    assert '(24,) or (1, 24)' in raises(ValueError, 'scale_b', i8.gemm_nt, **_args(scale_b=FakeTensor((24, 1),
                                                                                                         'float32')))
    raises(ValueError, 'scale_a', i8.gemm_nt, **_args(scale_a=FakeTensor((5, ), 'float32')))
    raises(ValueError, 'a', i8.gemm_nt, **_args(a=FakeTensor((2, 4, 64), 'int8')))
    assert 'cuda:1' in raises(ValueError, 'out', i8.gemm_nt, **_args(out=FakeTensor((4, 24), 'bfloat16', index=1)))
    raises(TypeError, 'a', i8.gemm_nt, None, FakeTensor((24, 64), 'int8'), FakeTensor((4, ), 'float32'),
           FakeTensor((24, ), 'float32'))


@pytest.mark.skipif(gpu_available(), reason='the library checks shapes only after a GPU run would start')
def test_without_a_gpu_the_library_checks_then_says_so():
    # The library's checks, named after this module's arguments.
    assert 'K=64' in raises(ValueError, 'b', i8.gemm_nt, **_args(b=FakeTensor((24, 32), 'int8')))
    assert 'N=24' in raises(ValueError, 'out', i8.gemm_nt, **_args(out=FakeTensor((4, 16), 'bfloat16')))
    assert 'K-major' in raises(ValueError, 'a', i8.gemm_nt, **_args(a=FakeTensor((4, 64), 'int8', strides=(1, 4))))
    assert 'multiple of 16' in raises(ValueError, 'k', i8.gemm_nt, **_args(a=FakeTensor((4, 72), 'int8'),
                                                                           b=FakeTensor((24, 72), 'int8')))
    assert 'contiguous' in raises(ValueError, 'scale_b', i8.gemm_nt,
                                  **_args(scale_b=FakeTensor((24, ), 'float32', strides=(2, ))))
    # Scales as vLLM passes them ([M, 1], [1, N]) are taken; then the missing GPU.
    with pytest.raises(RuntimeError, match='GPU'):
        i8.gemm_nt(**_args(scale_a=FakeTensor((4, 1), 'float32'), scale_b=FakeTensor((1, 24), 'float32')))
    # A kept plan: the second call of the signature skips the checks and reports the same.
    with pytest.raises(RuntimeError, match='GPU'):
        i8.gemm_nt(**_args())
    # No rows: nothing to run, with or without a GPU.
    empty = FakeTensor((0, 24), 'bfloat16')
    assert i8.gemm_nt(**_args(m=0, out=empty)) is empty
