"""The package installs, imports without torch or a GPU, and exports only what has an SM90 kernel."""
import os
import subprocess
import sys

import deep_gemm


def test_import_does_not_load_torch_or_initialise_cuda():
    # A fresh interpreter: what import deep_gemm pulls in, and nothing else.
    code = ('import sys, deep_gemm; '
            'print("torch" in sys.modules, deep_gemm.get_mk_alignment_for_contiguous_layout())')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env={**os.environ, 'CUDA_VISIBLE_DEVICES': ''})
    assert out.stdout.split() == ['False', '128']


def test_extension_does_not_link_libtorch_or_libcuda():
    # A fresh interpreter: this one may have torch loaded by other test modules.
    code = ('import deep_gemm\n'
            'maps = open("/proc/self/maps").read()\n'
            'print(deep_gemm._C.__file__ in maps, "libtorch" in maps, "libcuda.so" in maps)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ['True', 'False', 'False']


def test_version_names_the_api_level():
    assert deep_gemm.__version__.startswith('2.6.0+tilegemm.')


def test_functions_without_kernels_are_not_exported():
    # FP4 and SM100-only forms (the MN-major K-grouped FP8 GEMM), einsum and attention kernels.
    for name in ('fp8_fp4_gemm_nt', 'fp4_gemm_nt', 'm_grouped_fp8_fp4_gemm_nt_contiguous', 'einsum', 'fp8_einsum',
                 'fp8_mqa_logits', 'fp8_paged_mqa_logits', 'tf32_hc_prenorm_gemm', 'k_grouped_fp8_gemm_tn_contiguous',
                 'fp8_gemm_nt_skip_head_mid', 'get_mn_major_tma_aligned_packed_ue8m0_tensor'):
        assert not hasattr(deep_gemm, name), name


def test_installed_device_headers_are_used_by_the_jit():
    include = os.path.join(os.path.dirname(deep_gemm.__file__), 'include')
    assert os.path.isdir(os.path.join(include, 'tilegemm'))
    assert os.environ['TILEGEMM_DEVICE_INCLUDE_DIR'] in (include, os.environ.get('TILEGEMM_DEVICE_INCLUDE_DIR'))


def test_utils_are_reexported_at_top_level():
    assert deep_gemm.ceil_div is deep_gemm.utils.ceil_div
    assert deep_gemm.align(130, 128) == 256
    assert deep_gemm.ceil_div(0, 128) == 0 and deep_gemm.ceil_div(129, 128) == 2
