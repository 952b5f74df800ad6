"""deep_gemm.precompile without a GPU (and without torch): every supported function's calls are checked on stand-in
tensors and their kernels compiled into the JIT cache; a second process finds them all there; nothing runs and no
plan is kept; bad arguments name themselves. (That a real call then compiles nothing is a GPU test:
test_gpu_precompile.py.)"""
import json
import os
import subprocess
import sys

import pytest

import deep_gemm
from deep_gemm import _precompile


def run_python(code, cache_dir, **env):
    environment = dict(os.environ, DG_JIT_CACHE_DIR=str(cache_dir), **env)
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=900, env=environment)
    assert out.returncode == 0, out.stderr
    return out


PRECOMPILE_FP8 = '''
import json, deep_gemm
r = deep_gemm.precompile('fp8_gemm_nt', m=[1, 64, 4096], n=512, k=512)
print(json.dumps(r))
'''


def test_a_second_process_finds_every_kernel_in_the_cache(tmp_path):
    first = json.loads(run_python(PRECOMPILE_FP8, tmp_path).stdout)
    assert first['calls'] == 3 and first['kernels'] >= 1
    assert first['compiled'] == first['kernels'] and first['cached'] == 0
    second = json.loads(run_python(PRECOMPILE_FP8, tmp_path).stdout)
    assert second['kernels'] == first['kernels'] and second['compiled'] == 0 and second['cached'] == first['kernels']


def test_progress_goes_to_stderr_and_can_be_turned_off(tmp_path):
    shown = run_python(PRECOMPILE_FP8, tmp_path)
    assert 'deep_gemm.precompile:' in shown.stderr and 'kernels' in shown.stderr
    quiet = run_python(PRECOMPILE_FP8.replace("k=512)", "k=512, progress=False)"), tmp_path)
    assert 'deep_gemm.precompile' not in quiet.stderr


EVERY_FUNCTION = '''
import json, deep_gemm
from deep_gemm import _precompile
out = {}
for name in _precompile.SUPPORTED:
    kw = dict(m=256, n=256, k=256)
    if 'm_grouped' in name:
        kw['num_groups'] = 2
    if 'k_grouped' in name:
        kw.update(k=[128, 256], accumulate=True)
    out[name] = deep_gemm.precompile(name, progress=False, **kw)
out['fp8 1D1D'] = deep_gemm.precompile('fp8_gemm_nt', m=256, n=256, k=256, recipe=(1, 1, 128), accumulate=True,
                                       progress=False)
out['fp8 row-major scales'] = deep_gemm.precompile('fp8_gemm_nt', m=256, n=256, k=256, sf_layout='row-major',
                                                   progress=False)
out['masked expected_m'] = deep_gemm.precompile('m_grouped_fp8_gemm_nt_masked', m=256, n=256, k=256, num_groups=2,
                                                expected_m=[8, 128], progress=False)
print(json.dumps({'results': out, 'plans_kept': deep_gemm._plan_cache_info()['size']}))
'''


def test_every_supported_function_compiles_its_kernels_and_keeps_no_plan(tmp_path):
    got = json.loads(run_python(EVERY_FUNCTION, tmp_path).stdout)
    results = got['results']
    assert set(_precompile.SUPPORTED) <= set(results)
    for name, r in results.items():
        assert r['kernels'] >= 1 and r['compiled'] + r['cached'] == r['kernels'], (name, r)
    # The fp8_fp4_* names run the FP8 kernels: all found in the cache the fp8_* names filled before them.
    assert results['fp8_fp4_gemm_nt']['compiled'] == 0
    assert results['masked expected_m']['calls'] == 2
    assert got['plans_kept'] == 0


@pytest.mark.parametrize('kwargs,argument', [
    (dict(function='fp8_gemm_nt_skip_head_mid', m=1, n=8, k=128), 'function'),
    (dict(function='einsum', m=1, n=8, k=128), 'function'),
    (dict(function='fp8_gemm_nt', m=-1, n=8, k=128), 'm'),
    (dict(function='fp8_gemm_nt', m=[], n=8, k=128), 'm'),
    (dict(function='fp8_gemm_nt', m=True, n=8, k=128), 'm'),
    (dict(function='fp8_gemm_nt', m=1, n=8, k=128, sf_layout='k-major'), 'sf_layout'),
    (dict(function='fp8_gemm_nt', m=1, n=8, k=128, out_dtype='fp16'), 'out_dtype'),
    (dict(function='fp8_gemm_nt', m=1, n=8, k=128, recipe=(1, 64, 64)), 'recipe'),
    (dict(function='m_grouped_fp8_gemm_nt_contiguous', m=128, n=8, k=128), 'num_groups'),
    (dict(function='bf16_gemm_nt', m=64, n=100, k=64), 'n'),  # d rows of 200 bytes: the call's own C++ check
    (dict(function='fp8_gemm_nt', m=64, n=128, k=128, hw='ascend-950dt'), 'hw'),
])
def test_bad_arguments_name_themselves(kwargs, argument):
    function = kwargs.pop('function')
    with pytest.raises(ValueError) as info:
        deep_gemm.precompile(function, progress=False, **kwargs)
    assert str(info.value).startswith(argument + ':'), str(info.value)


def test_a_cache_that_cannot_keep_kernels_is_an_error(tmp_path):
    code = '''
import deep_gemm
try:
    deep_gemm.precompile('bf16_gemm_nt', m=64, n=64, k=64, progress=False)
except ValueError as e:
    print(str(e).split(':')[0])
'''
    out = run_python(code, '/proc/no-such-dir')
    assert out.stdout.strip() == 'DG_JIT_CACHE_DIR'


def test_set_jit_compile_takes_a_bool_and_sets_dg_jit_disable(monkeypatch):
    monkeypatch.setenv('DG_JIT_DISABLE', '0')
    with pytest.raises(TypeError, match='allowed: expected a bool'):
        deep_gemm.set_jit_compile('no')
    deep_gemm.set_jit_compile(False)
    assert os.environ['DG_JIT_DISABLE'] == '1'
    deep_gemm.set_jit_compile(True)
    assert os.environ['DG_JIT_DISABLE'] == '0'
