"""deep_gemm._fp8_fp4_sm90 (the SM90 FP8 x FP4 GEMM, private until it has run on a GPU) without a GPU: DeepGEMM's
(tensor, sf) pairs checked and named, the library's checks named after them, then the missing GPU; and the public
fp8_fp4_gemm_nt still refusing packed FP4 on SM90."""
import pytest

import deep_gemm
from deep_gemm import _fp8_fp4_sm90 as f4
from conftest import FakeTensor, gpu_available, raises


def operands(m=64, n=256, k=512, **over):
    args = dict(a=(FakeTensor((m, k), 'float8_e4m3fn'), FakeTensor((m, k // 128), 'float32')),
                b=(FakeTensor((n, k // 2), 'int8'), FakeTensor((n, k // 32), 'float32')),
                d=FakeTensor((m, n), 'bfloat16'))
    args.update(over)
    return args


def test_pairs_and_recipes_are_named():
    raises(TypeError, 'a', f4.fp8_fp4_gemm_nt, **operands(a=FakeTensor((64, 512), 'float8_e4m3fn')))
    raises(ValueError, 'a[0]', f4.fp8_fp4_gemm_nt, **operands(a=(FakeTensor((64, 512), 'bfloat16'),
                                                                  FakeTensor((64, 4), 'float32'))))
    assert 'int8' in raises(ValueError, 'b[0]', f4.fp8_fp4_gemm_nt,
                            **operands(b=(FakeTensor((256, 512), 'float8_e4m3fn'), FakeTensor((256, 16), 'float32'))))
    raises(TypeError, 'b[1]', f4.fp8_fp4_gemm_nt, **operands(b=(FakeTensor((256, 256), 'int8'), None)))
    assert '(1, 32)' in raises(ValueError, 'recipe_b', f4.fp8_fp4_gemm_nt, recipe_b=(1, 128), **operands())


@pytest.mark.skipif(gpu_available(), reason='the library checks shapes only after a GPU run would start')
def test_the_library_names_deepgemm_pairs_then_reports_the_missing_gpu():
    assert '[256, 16]' in raises(ValueError, 'b[1]', f4.fp8_fp4_gemm_nt,
                                 **operands(b=(FakeTensor((256, 256), 'int8'), FakeTensor((256, 4), 'float32'))))
    assert 'K/2' in raises(ValueError, 'b[0]', f4.fp8_fp4_gemm_nt,
                           **operands(b=(FakeTensor((256, 512), 'int8'), FakeTensor((256, 16), 'float32'))))
    assert '[64, 4]' in raises(ValueError, 'a[1]', f4.fp8_fp4_gemm_nt,
                               **operands(a=(FakeTensor((64, 512), 'float8_e4m3fn'), FakeTensor((64, 8), 'float32'))))
    raises(ValueError, 'd', f4.fp8_fp4_gemm_nt, **operands(d=FakeTensor((64, 256), 'float16')))
    with pytest.raises(RuntimeError, match='GPU'):
        f4.fp8_fp4_gemm_nt(**operands())


def test_public_fp8_fp4_gemm_still_refuses_packed_fp4():
    args = operands()
    assert 'packed FP4' in raises(ValueError, 'b', deep_gemm.fp8_fp4_gemm_nt, args['a'], args['b'], args['d'])


def masked_operands(e=4, m=32, n=256, k=512, **over):
    args = dict(a=(FakeTensor((e, m, k), 'float8_e4m3fn'), FakeTensor((e, m, k // 128), 'float32')),
                b=(FakeTensor((e, n, k // 2), 'int8'), FakeTensor((e, n, k // 32), 'float32')),
                d=FakeTensor((e, m, n), 'bfloat16'), masked_m=FakeTensor((e, ), 'int32'), expected_m=8)
    args.update(over)
    return args


def test_masked_names_bad_arguments():
    raises(TypeError, 'expected_m', f4.m_grouped_fp8_fp4_gemm_nt_masked, **masked_operands(expected_m=8.0))
    raises(ValueError, 'expected_m', f4.m_grouped_fp8_fp4_gemm_nt_masked, **masked_operands(expected_m=0))
    raises(ValueError, 'a[0]', f4.m_grouped_fp8_fp4_gemm_nt_masked,
           **masked_operands(a=(FakeTensor((4, 32, 512), 'bfloat16'), FakeTensor((4, 32, 4), 'float32'))))


@pytest.mark.skipif(gpu_available(), reason='the library checks shapes only after a GPU run would start')
def test_masked_library_checks_then_the_missing_gpu():
    assert '[G=4]' in raises(ValueError, 'masked_m', f4.m_grouped_fp8_fp4_gemm_nt_masked,
                             **masked_operands(masked_m=FakeTensor((3, ), 'int32')))
    assert '[4, 256, 16]' in raises(ValueError, 'b[1]', f4.m_grouped_fp8_fp4_gemm_nt_masked,
                                    **masked_operands(b=(FakeTensor((4, 256, 256), 'int8'),
                                                         FakeTensor((4, 256, 8), 'float32'))))
    with pytest.raises(RuntimeError, match='GPU'):
        f4.m_grouped_fp8_fp4_gemm_nt_masked(**masked_operands())


def mx_operands(m=64, n=256, k=512, **over):
    args = dict(a=(FakeTensor((m, k), 'float8_e4m3fn'), FakeTensor((m, k // 32), 'float32')),
                b=(FakeTensor((n, k), 'float8_e4m3fn'), FakeTensor((n, k // 32), 'float32')),
                d=FakeTensor((m, n), 'bfloat16'))
    args.update(over)
    return args


def test_mxfp8_names_bad_arguments():
    raises(ValueError, 'b[0]', f4.mxfp8_gemm_nt, **mx_operands(b=(FakeTensor((256, 256), 'int8'),
                                                                   FakeTensor((256, 16), 'float32'))))


@pytest.mark.skipif(gpu_available(), reason='the library checks shapes only after a GPU run would start')
def test_mxfp8_library_checks_then_the_missing_gpu():
    assert '[64, 16]' in raises(ValueError, 'a[1]', f4.mxfp8_gemm_nt,
                                **mx_operands(a=(FakeTensor((64, 512), 'float8_e4m3fn'), FakeTensor((64, 4), 'float32'))))
    with pytest.raises(RuntimeError, match='GPU'):
        f4.mxfp8_gemm_nt(**mx_operands())
