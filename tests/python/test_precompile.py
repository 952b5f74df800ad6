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
    if name == 'fp8_gemm_nt_skip_head_mid':
        kw['head_splits'] = (64, 64, 64)
    if name == 'tf32_hc_prenorm_gemm':
        kw['n'] = 24
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
    (dict(function='fp8_mqa_logits', m=1, n=8, k=128), 'function'),
    (dict(function='fp8_gemm_nt_skip_head_mid', m=1, n=256, k=128), 'head_splits'),
    (dict(function='fp8_gemm_nt_skip_head_mid', m=1, n=256, k=128, head_splits=(64, 64)), 'head_splits'),
    (dict(function='fp8_gemm_nt_skip_head_mid', m=1, n=256, k=128, head_splits=(0, 64, 0)), 'head_splits'),
    (dict(function='fp8_gemm_nt_skip_head_mid', m=1, n=256, k=128, head_splits=(64, -1, 64)), 'head_splits'),
    (dict(function='fp8_gemm_nt_skip_head_mid', m=1, n=200, k=128, head_splits=(64, 64, 64)), 'n'),
    (dict(function='fp8_gemm_nt', m=1, n=256, k=128, head_splits=(64, 64, 64)), 'head_splits'),
    (dict(function='fp8_gemm_nt', m=1, n=256, k=128, num_splits=2), 'num_splits'),
    (dict(function='fp8_gemm_nt_skip_head_mid', m=1, n=256, k=128, head_splits=(64, 64, 64), recipe=(1, 1, 128)),
     'recipe'),
    (dict(function='fp8_gemm_nt_skip_head_mid', m=1, n=256, k=128, head_splits=(64, 64, 64), out_dtype='fp32'),
     'out_dtype'),
    (dict(function='fp8_gemm_nt_skip_head_mid', m=1, n=256, k=128, head_splits=(64, 64, 64), accumulate=True),
     'accumulate'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=8, k=128, num_groups=2), 'num_groups'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=8, k=128, recipe=(1, 128, 128)), 'recipe'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=8, k=128, sf_layout='row-major'), 'sf_layout'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=12, k=128), 'n'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=[8, 40], k=128), 'n'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=8, k=0), 'k'),
    (dict(function='tf32_hc_prenorm_gemm', m=64, n=8, k=100), 'k'),
    (dict(function='tf32_hc_prenorm_gemm', m=-1, n=8, k=128), 'm'),
    (dict(function='tf32_hc_prenorm_gemm', m=2**31, n=8, k=128), 'm'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=8, k=128, num_splits=0), 'num_splits'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=8, k=128, num_splits=True), 'num_splits'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=8, k=128, head_splits=(1, 1, 1)), 'head_splits'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=8, k=128, jobs=-1), 'jobs'),
    (dict(function='tf32_hc_prenorm_gemm', m=1, n=8, k=128, hw='ascend-950dt'), 'hw'),
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


# fp8_gemm_nt_skip_head_mid and tf32_hc_prenorm_gemm: the kernels a precompile compiles for an M range are those the
# calls for each M use (the same specs: names and generated sources), each compiled once, and a second precompile
# finds them all cached.
SPECIAL = '''
import json, deep_gemm
from deep_gemm import _C, _plans, _precompile as P
out = {}
kw = dict(n=4 * 192, k=512, head_splits=(128, 64, 64), progress=False)
ms = [1, 64, 128, 1000, 4096]
out['shm'] = deep_gemm.precompile('fp8_gemm_nt_skip_head_mid', m=ms, **kw)
out['shm again'] = deep_gemm.precompile('fp8_gemm_nt_skip_head_mid', m=ms, **kw)
out['layout kernels'] = deep_gemm.precompile('fp8_gemm_nt', m=0, n=128, k=128, progress=False)['kernels']


def call(m):
    # As a caller makes it: a and its MN-major per-token scales, b and its per-block scales, d with the mid columns.
    a = (P._StandIn((m, 512), 'float8_e4m3fn'), P._StandIn((m, 4), 'float32', (1, -(-m // 4) * 4)))
    b = (P._StandIn((768, 512), 'float8_e4m3fn'), P._StandIn((6, 4), 'float32'))
    d = P._StandIn((m, 768 + 4 * 64), 'bfloat16')
    return lambda: P._call(deep_gemm.fp8_gemm_nt_skip_head_mid, (a, b, d, [128, 64, 64]), {})


def precompiled_calls():
    for m in ms:
        args, kwargs = P._skip_head_mid_call(m, 768, 512, (128, 64, 64), 'mn-major')
        P._call(deep_gemm.fp8_gemm_nt_skip_head_mid, args, kwargs)


out['shm calls'] = [_C.plan_kernel_specs(_plans.collect(call(m)), 'h200') for m in ms]
out['shm precompiled'] = _C.plan_kernel_specs(_plans.collect(precompiled_calls), 'h200')
hc = dict(n=24, k=7168, progress=False)
hc_ms = [0, 1, 64, 4096, 8192, 65536]
out['hc'] = deep_gemm.precompile('tf32_hc_prenorm_gemm', m=hc_ms, **hc)
out['hc again'] = deep_gemm.precompile('tf32_hc_prenorm_gemm', m=hc_ms, **hc)
out['hc splits'] = deep_gemm.precompile('tf32_hc_prenorm_gemm', m=hc_ms, num_splits=4, **hc)
out['hc specs'] = {m: _C.hc_prenorm_kernel_specs([m], 24, 7168, None, 'h200', 0) for m in hc_ms}
out['hc split specs'] = _C.hc_prenorm_kernel_specs(hc_ms, 24, 7168, 4, 'h200', 0)
out['plans_kept'] = deep_gemm._plan_cache_info()['size']
print(json.dumps(out))
'''


def cached_sources(cache_dir):
    """{kernel name: kernel.cu} of the JIT cache's kernels (kernels/kernel.<name>.<key>/)."""
    return {entry.name.split('.')[1]: (entry / 'kernel.cu').read_text() for entry in (cache_dir / 'kernels').iterdir()}


def test_skip_head_mid_and_hc_prenorm_precompile_the_kernels_their_calls_use(tmp_path):
    got = json.loads(run_python(SPECIAL, tmp_path).stdout)
    cached = cached_sources(tmp_path)
    # skip_head_mid: each M's call makes the kernel the precompile compiled, and the cache holds each once.
    precompiled = dict(got['shm precompiled'])
    per_call = {name: source for specs in got['shm calls'] for name, source in specs}
    assert per_call == precompiled and all(len(specs) == 1 for specs in got['shm calls'])
    assert len(per_call) > 1 and all(name.endswith('_heads128_64_64') for name in per_call)
    shm = got['shm']
    assert shm['calls'] == 5 and shm['kernels'] == len(per_call) + got['layout kernels'], shm
    assert shm['compiled'] == shm['kernels'] and shm['cached'] == 0
    again = got['shm again']
    assert again['kernels'] == shm['kernels'] and again['compiled'] == 0 and again['cached'] == shm['kernels']
    for name, source in per_call.items():
        assert source in cached[name]
    # HC prenorm: the library's split sums in the kernel for small M (16-row blocks up to M = 64 here: by the last CTA
    # over 56 splits at M = 1, in one cluster of 8 at M = 64) and at M = 4096 (two splits in a cluster of 2), not for
    # larger M; M = 0 launches nothing.
    assert got['hc specs']['0'] == [] and all(len(got['hc specs'][str(m)]) == 1 for m in (1, 64, 4096, 8192, 65536))
    specs = {name: source for pairs in got['hc specs'].values() for name, source in pairs}
    assert sorted(specs) == ['sm90_tf32_hc_prenorm_gemm_m16_n24_s8_reduce', 'sm90_tf32_hc_prenorm_gemm_m16_n24_s8_reduce_c8',
                             'sm90_tf32_hc_prenorm_gemm_m64_n24_s7', 'sm90_tf32_hc_prenorm_gemm_m64_n24_s7_reduce_c2']
    hc = got['hc']
    assert hc['calls'] == 6 and hc['kernels'] == 4 and hc['compiled'] == 4 and hc['cached'] == 0, hc
    again = got['hc again']
    assert again['kernels'] == 4 and again['compiled'] == 0 and again['cached'] == 4
    # The caller's split: partials in d's slices, never summed in the kernel: the plain kernels, the 64-row one
    # already cached, the 16-row one (small M) new.
    split_names = [name for name, _ in got['hc split specs']]
    assert split_names == ['sm90_tf32_hc_prenorm_gemm_m16_n24_s8', 'sm90_tf32_hc_prenorm_gemm_m64_n24_s7']
    splits = got['hc splits']
    assert splits['kernels'] == 2 and splits['compiled'] == 1 and splits['cached'] == 1, splits
    for name, source in specs.items():
        assert source in cached[name]
    assert got['plans_kept'] == 0
