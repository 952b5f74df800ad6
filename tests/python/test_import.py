"""The package installs, imports without torch or a GPU, and exports only what has an SM90 kernel."""
import os
import re
import shutil
import subprocess
import sys

import pytest

import deep_gemm


def test_import_without_a_visible_gpu_does_not_load_torch():
    # A fresh interpreter: what import deep_gemm pulls in, and nothing else.
    code = ('import sys, deep_gemm; '
            'print("torch" in sys.modules, deep_gemm.get_mk_alignment_for_contiguous_layout())')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env={**os.environ, 'CUDA_VISIBLE_DEVICES': ''})
    assert out.stdout.split() == ['False', '128']


def needed_libraries(path):
    """The DT_NEEDED entries of a shared object: what it links, as opposed to what is loaded beside it."""
    readelf = shutil.which('readelf')
    if readelf is None:
        pytest.skip('readelf (binutils) is not installed')
    out = subprocess.run([readelf, '-d', path], capture_output=True, text=True, check=True).stdout
    return re.findall(r'\(NEEDED\)\s+Shared library: \[([^\]]+)\]', out)


def test_extension_does_not_link_libtorch_or_libcuda():
    # The binding takes plain values, so it never links libtorch; the driver is reached through cudart's
    # entry points, so libcuda is not linked either (cuBLASLt may still dlopen it: see the test below).
    needed = needed_libraries(deep_gemm._C.__file__)
    print('NEEDED', needed)
    assert needed, 'readelf found no NEEDED entries'
    assert not [lib for lib in needed if lib.startswith(('libtorch', 'libc10', 'libcuda.'))], needed


# Run in a fresh interpreter with nothing imported first. libcuda may be mapped after the import on a GPU
# machine (libcublasLt's load-time initialiser dlopens it; a fake libcuda that logs every entry point showed
# no call during the import), so mapped or not is no test of initialisation. The driver answers every call but cuInit/cuDriverGetVersion with
# CUDA_ERROR_NOT_INITIALIZED (3) until someone calls cuInit, and 34 (CUDA_ERROR_STUB_LIBRARY) from a stub.
FRESH_IMPORT = """
import ctypes, os, re, sys
import deep_gemm
maps = open('/proc/self/maps').read()  # lists the real paths of what is mapped
libcuda = re.search(r'(/\\S*/libcuda\\.so[.0-9]*)$', maps, re.M)
if libcuda is None:
    cuda = 'absent'
else:
    rc = ctypes.CDLL(libcuda.group(1)).cuDeviceGetCount(ctypes.byref(ctypes.c_int()))
    cuda = {0: 'initialised', 3: 'uninitialised', 34: 'stub'}.get(rc, f'error-{rc}')
print(os.path.realpath(deep_gemm._C.__file__) in maps, 'libtorch' in maps, 'torch' in sys.modules, cuda)
"""


def test_import_loads_no_libtorch_and_never_initialises_cuda():
    out = subprocess.run([sys.executable, '-c', FRESH_IMPORT], capture_output=True, text=True, check=True)
    print(out.stdout)
    extension_loaded, libtorch_loaded, torch_imported, cuda = out.stdout.split()
    assert (extension_loaded, libtorch_loaded, torch_imported) == ('True', 'False', 'False')
    assert cuda in ('absent', 'uninitialised', 'stub'), f'import deep_gemm left the CUDA driver {cuda}'


def test_import_after_torch_does_not_initialise_torch_cuda():
    pytest.importorskip('torch')
    code = 'import torch, deep_gemm; print(torch.cuda.is_initialized())'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == 'False'


def test_version_names_the_api_level():
    # DeepGEMM's version (the API matched), tilegemm's own as the PEP 440 local label.
    assert deep_gemm.__version__ == '2.6.1+tilegemm.' + deep_gemm._C.tilegemm_version
    assert re.fullmatch(r'2\.6\.1\+tilegemm(\.[0-9a-z]+)+', deep_gemm.__version__), deep_gemm.__version__


def test_functions_without_kernels_are_not_exported():
    # FP4-only names, SM100-only forms (the MN-major K-grouped FP8 GEMM) and the mega MoE kernels
    # (tests/python/test_dropin_surface.py lists every absent DeepGEMM name with its reason).
    for name in ('fp4_gemm_nt', 'k_grouped_fp8_gemm_tn_contiguous', 'fp8_fp4_mega_moe'):
        assert not hasattr(deep_gemm, name), name


def test_mqa_logits_are_exported():
    # DeepSeek-V3.2's indexer: DeepGEMM's five names, from the module that holds their checks.
    from deep_gemm import _mqa_logits
    for name in ('fp8_fp4_mqa_logits', 'fp8_mqa_logits', 'get_paged_mqa_logits_metadata',
                 'fp8_fp4_paged_mqa_logits', 'fp8_paged_mqa_logits'):
        assert getattr(deep_gemm, name) is getattr(_mqa_logits, name), name


def test_einsum_is_exported():
    # Batched GEMMs over strided views, and 'bmk,bnk->mn' as one batch-reduced GEMM (deep_gemm/_einsum.py).
    assert callable(deep_gemm.einsum) and callable(deep_gemm.fp8_einsum)


def test_installed_device_headers_are_used_by_the_jit():
    include = os.path.join(os.path.dirname(deep_gemm.__file__), 'include')
    assert os.path.isdir(os.path.join(include, 'tilegemm'))
    assert os.environ['TILEGEMM_DEVICE_INCLUDE_DIR'] in (include, os.environ.get('TILEGEMM_DEVICE_INCLUDE_DIR'))


def test_utils_are_reexported_at_top_level():
    assert deep_gemm.ceil_div is deep_gemm.utils.ceil_div
    assert deep_gemm.align(130, 128) == 256
    assert deep_gemm.ceil_div(0, 128) == 0 and deep_gemm.ceil_div(129, 128) == 2
