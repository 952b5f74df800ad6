"""DeepGEMM's helper semantics without torch: deep_gemm.testing and deep_gemm.utils on plain Python values and
stand-in tensors, the fp8_fp4_* names (FP8 runs the FP8 GEMM, FP4 is refused by name), the legacy aliases, the
contiguous-layout alignment settings and the version string."""
import importlib
import os
import re
import subprocess
import sys
import types

import pytest

import deep_gemm
from conftest import FakeTensor as T

# The module (deep_gemm.testing.bench is the function, as in DeepGEMM).
bench_module = importlib.import_module('deep_gemm.testing.bench')


def run_python(code, **env):
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    return out


def test_helper_modules_import_without_torch():
    code = ('import sys; import deep_gemm.testing, deep_gemm.utils.math, deep_gemm.utils.layout, deep_gemm.utils.dist; '
            'from deep_gemm.utils.math import per_token_cast_to_fp8, per_token_cast_to_fp4; '
            'from deep_gemm.testing import bench_kineto, get_arch_major, test_filter, ignore_env; '
            'print("torch" in sys.modules)')
    assert run_python(code).stdout.split() == ['False']


def test_utils_reexports_its_modules_as_deepgemm_does():
    import deep_gemm.utils.math as math_module
    assert isinstance(deep_gemm.utils.math, types.ModuleType) and isinstance(deep_gemm.utils.layout, types.ModuleType)
    for name in ('ceil_div', 'align', 'ceil_to_ue8m0', 'pack_ue8m0_to_int', 'unpack_ue8m0_from_int',
                 'per_token_cast_to_fp8', 'per_channel_cast_to_fp8', 'per_block_cast_to_fp8',
                 'per_custom_dims_cast_to_fp8', 'per_token_cast_to_fp4', 'transpose_packed_fp4', 'cast_back_from_fp4'):
        assert getattr(deep_gemm.utils, name) is getattr(math_module, name) is getattr(deep_gemm, name), name
    for name in ('get_mk_alignment_for_contiguous_layout', 'set_mk_alignment_for_contiguous_layout',
                 'get_mn_major_tma_aligned_tensor', 'get_tma_aligned_size'):
        assert getattr(deep_gemm.utils, name) is getattr(deep_gemm.utils.layout, name) is getattr(deep_gemm, name)
    assert deep_gemm.init_dist is deep_gemm.utils.init_dist is deep_gemm.utils.dist.init_dist
    assert deep_gemm.utils.uneven_all_gather is deep_gemm.utils.dist.uneven_all_gather
    assert 'dist_print' not in deep_gemm.utils.__all__  # DeepGEMM re-exports only the two above


def test_testing_exports_deepgemms_helpers():
    # As in DeepGEMM, `bench` is the function (the star import rebinds the module's name).
    assert callable(deep_gemm.testing.bench) and deep_gemm.testing.bench is bench_module.bench
    assert isinstance(deep_gemm.testing.utils, types.ModuleType)
    for name in ('bench', 'bench_kineto', 'empty_suppress', 'suppress_stdout_stderr', 'calc_diff', 'count_bytes',
                 'assert_bitwise_equal', 'get_arch_major', 'test_filter', 'ignore_env'):
        assert name in deep_gemm.testing.__all__ and callable(getattr(deep_gemm.testing, name)), name


def test_ceil_div_and_align():
    assert [deep_gemm.ceil_div(x, 128) for x in (0, 1, 128, 129)] == [0, 1, 1, 2]
    assert deep_gemm.align(130, 128) == 256 and deep_gemm.align(0, 64) == 0
    for fn in (deep_gemm.ceil_div, deep_gemm.align):
        with pytest.raises(ValueError, match=r'^y: expected a non-zero divisor, got 0'):
            fn(1, 0)


class Sized:
    def __init__(self, numel, element_size):
        self._numel, self._element_size = numel, element_size

    def numel(self):
        return self._numel

    def element_size(self):
        return self._element_size


def test_count_bytes_walks_tuples_and_lists_and_skips_none():
    a, sf = Sized(4096 * 7168, 1), Sized(4096 * 56, 4)
    assert deep_gemm.testing.count_bytes(a) == 4096 * 7168
    assert deep_gemm.testing.count_bytes((a, sf), None, [Sized(10, 2), (None, (Sized(3, 8), ))]) == \
        4096 * 7168 + 4096 * 56 * 4 + 20 + 24
    assert deep_gemm.testing.count_bytes() == 0 and deep_gemm.testing.count_bytes(None, (None, )) == 0


class Vec:
    """Just enough of a tensor for calc_diff: elementwise *, +, double() and sum()."""

    def __init__(self, values):
        self.values = [float(v) for v in values]

    def double(self):
        return self

    def __mul__(self, other):
        return Vec(a * b for a, b in zip(self.values, other.values))

    def __add__(self, other):
        return Vec(a + b for a, b in zip(self.values, other.values))

    def sum(self):
        return sum(self.values)


def test_calc_diff():
    calc_diff = deep_gemm.testing.calc_diff
    zeros = Vec([0, 0, 0])
    # Both all zero: DeepGEMM defines the difference as 0.0 rather than dividing by zero.
    assert calc_diff(zeros, zeros) == 0.0 and isinstance(calc_diff(zeros, zeros), float)
    x = Vec([1, -2, 3])
    assert calc_diff(x, x) == pytest.approx(0.0, abs=1e-15)
    assert calc_diff(x, Vec([-1, 2, -3])) == pytest.approx(2.0)
    assert calc_diff(Vec([1, 0]), Vec([0, 1])) == pytest.approx(1.0)
    assert calc_diff(x, zeros) == pytest.approx(1.0)
    assert calc_diff(Vec([1, 2]), Vec([1, 2.02])) == pytest.approx(1 - 2 * 5.04 / (5 + 5.0804))
    # Not tensors: a TypeError naming the argument (was an AttributeError from .double()).
    with pytest.raises(TypeError, match='^x: expected a torch.Tensor, got NoneType'):
        calc_diff(None, None)
    with pytest.raises(TypeError, match='^y: expected a torch.Tensor, got list'):
        calc_diff(x, [1, 2, 3])


def test_test_filter_runs_or_reports(capsys):
    calls = []

    @deep_gemm.testing.test_filter(lambda: True)
    def test_kept(a, b=0):
        calls.append((a, b))

    def never():
        return False

    @deep_gemm.testing.test_filter(never)
    def test_dropped():
        calls.append('dropped')

    test_kept(1, b=2)
    test_dropped()
    assert calls == [(1, 2)]
    assert test_dropped.__name__ == 'test_dropped'
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'test_dropped:' and out[1].startswith(' > Filtered by <function') and 'never' in out[1]


def test_ignore_env_drops_the_variable_only_when_asked(monkeypatch):
    monkeypatch.setenv('DG_JIT_DEBUG', '1')
    seen = []

    def look():
        seen.append(os.environ.get('DG_JIT_DEBUG'))

    deep_gemm.testing.ignore_env('DG_JIT_DEBUG', lambda: True)(look)()
    assert seen == [None] and os.environ['DG_JIT_DEBUG'] == '1'
    deep_gemm.testing.ignore_env('DG_JIT_DEBUG', lambda: False)(look)()
    assert seen == [None, '1']

    def fail():
        raise KeyError('inside')

    with pytest.raises(KeyError):
        deep_gemm.testing.ignore_env('DG_JIT_DEBUG', lambda: True)(fail)()
    assert os.environ['DG_JIT_DEBUG'] == '1'


def test_suppress_stdout_stderr_silences_the_file_descriptors():
    # A fresh interpreter owns fds 1 and 2; writes through them (as C++ code makes) must vanish too.
    code = ('import os, sys; from deep_gemm.testing import suppress_stdout_stderr, empty_suppress\n'
            'print("before", flush=True)\n'
            'with suppress_stdout_stderr():\n'
            '    print("hidden"); print("hidden", file=sys.stderr); os.write(1, b"hidden\\n"); os.write(2, b"hidden")\n'
            'print("after", flush=True); print("err-after", file=sys.stderr, flush=True)\n'
            'with empty_suppress() as s:\n'
            '    print("shown", flush=True)\n')
    out = run_python(code)
    assert out.stdout.split() == ['before', 'after', 'shown'] and out.stderr.split() == ['err-after']


def test_bench_kineto_under_nvidia_tools_returns_ones_without_torch():
    code = ('import sys; from deep_gemm.testing import bench_kineto\n'
            'print(bench_kineto(lambda: 1 / 0, "gemm_"), bench_kineto(lambda: 1 / 0, ("gemm_", "nvjet")))\n'
            'print("torch" in sys.modules)')
    assert run_python(code, DG_USE_NVIDIA_TOOLS='1').stdout.split() == ['1', '(1,', '1)', 'False']


def test_bench_kineto_kernel_names_must_be_str_or_tuple():
    with pytest.raises(TypeError, match='^kernel_names: expected a str or a tuple'):
        deep_gemm.testing.bench_kineto(lambda: None, ['gemm_'])


# torch.profiler's key_averages().table() with CUDA activity only, column by column: the last two columns are the
# average device time per call and the call count. The kernels are tilegemm's (the GEMMs' entry points and a
# scale-layout kernel, which 'gemm_' must not find), torch's and cuBLASLt's.
COLUMNS = ('Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg', 'Self CUDA', 'Self CUDA %',
           'CUDA total', 'CUDA time avg', '# of Calls')
ROWS = [
    ('sm90_fp8_gemm_1d2d_impl', '1.234ms', '55.00%', '1.234ms', '41.133us', '30'),
    ('sf_transpose_fp32', '30.000us', '1.00%', '30.000us', '1.000us', '30'),
    ('void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>>(...)', '900.000us', '40.00%',
     '900.000us', '30.000us', '30'),
    ('sm90_bf16_gemm_impl', '120.000us', '5.00%', '120.000us', '12.000us', '10'),
    ('nvjet_tst_128x256_64x4_2x1', '2.100ms', '10.00%', '2.100ms', '1.050ms', '2'),
]


def table_line(cells):
    return f'{cells[0]:>100}  ' + '  '.join(f'{c:>12}' for c in cells[1:])


def profile_table():
    rule = '-' * 100 + '  ' + '  '.join(['-' * 12] * len(COLUMNS))
    line = table_line
    cpu = ('0.00%', '0.000us', '0.00%', '0.000us', '0.000us')
    body = [line((row[0], ) + cpu + row[1:]) for row in ROWS]
    return [rule, line(('Name', ) + COLUMNS), rule] + body + [rule, 'Self CPU time total: 1.000ms',
                                                               'Self CUDA time total: 4.354ms', '']


PROFILE = profile_table()


def test_kernel_names_match_as_substrings_of_the_profile_rows():
    times = bench_module._kernel_times
    # DeepGEMM's tests time FP8 GEMMs as 'gemm_' and BF16 ones as 'bf16_gemm': both find tilegemm's kernels.
    fp8_only = [line for line in PROFILE if 'bf16' not in line]
    assert times(fp8_only, ('gemm_', ), False) == [pytest.approx(41.133e-6)]
    assert times(PROFILE, ('bf16_gemm', 'fp8_gemm_1d2d', 'nvjet', 'reduce'), False) == \
        [pytest.approx(12e-6), pytest.approx(41.133e-6), pytest.approx(1.05e-3), 0]
    with pytest.raises(ValueError, match=r"^kernel_names: expected 'gemm_' to match one kernel of the profile, got 2"):
        times(PROFILE, ('gemm_', ), False)
    # Several kernels: the call-weighted average of their per-call times.
    assert times(PROFILE, ('gemm_', ), True) == [pytest.approx((41.133e-6 * 30 + 12e-6 * 10) / 40)]


def test_get_arch_major_reads_the_current_device(monkeypatch):
    stub = types.ModuleType('torch')
    stub.cuda = types.SimpleNamespace(get_device_capability=lambda: (9, 0))
    monkeypatch.setitem(sys.modules, 'torch', stub)
    assert deep_gemm.testing.get_arch_major() == 9


def fp8(*shape):
    return T(shape, 'float8_e4m3fn')


def f32(*shape):
    return T(shape, 'float32')


WRAPPERS = {
    'fp8_fp4_gemm_nt': 'fp8_gemm_nt', 'fp8_fp4_gemm_nn': 'fp8_gemm_nn', 'fp8_fp4_gemm_tn': 'fp8_gemm_tn',
    'fp8_fp4_gemm_tt': 'fp8_gemm_tt', 'm_grouped_fp8_fp4_gemm_nt_contiguous': 'm_grouped_fp8_gemm_nt_contiguous',
    'm_grouped_fp8_fp4_gemm_nn_contiguous': 'm_grouped_fp8_gemm_nn_contiguous',
    'm_grouped_fp8_fp4_gemm_nt_masked': 'm_grouped_fp8_gemm_nt_masked',
}


def wrapper_args(name):
    """Positional arguments with FP8 operands, and keyword arguments with every option set away from its default."""
    keywords = {'recipe': None, 'recipe_a': (1, 128), 'recipe_b': (128, 128), 'compiled_dims': 'mn',
                'disable_ue8m0_cast': True}
    if 'contiguous' in name:
        keywords.update(use_psum_layout=True, ensure_zero_padding=False)
        if name.endswith('nt_contiguous'):
            keywords['expected_m_for_psum_layout'] = 256
        return (((fp8(256, 512), f32(256, 4)), (fp8(2, 384, 512), f32(2, 3, 4)), T((256, 384)), T((2, ), 'int32')),
                keywords)
    if 'masked' in name:
        return ((fp8(2, 64, 512), f32(2, 64, 4)), (fp8(2, 384, 512), f32(2, 3, 4)), T((2, 64, 384)),
                T((2, ), 'int32'), 48), keywords
    return ((fp8(256, 512), f32(256, 4)), (fp8(384, 512), f32(3, 4)), T((256, 384))), {'c': None, **keywords}


@pytest.mark.parametrize('name', sorted(WRAPPERS))
def test_fp8_fp4_names_run_the_fp8_gemm_with_every_argument(name, monkeypatch):
    recorded = []
    monkeypatch.setattr(deep_gemm._fp8, WRAPPERS[name], lambda *args, **kwargs: recorded.append((args, kwargs)))
    args, kwargs = wrapper_args(name)
    getattr(deep_gemm, name)(*args, **kwargs)
    (got_args, got_kwargs), = recorded
    assert got_args == args and got_kwargs == kwargs


@pytest.mark.parametrize('name', sorted(WRAPPERS))
def test_fp8_fp4_names_validate_as_the_fp8_gemm_does(name):
    # The real FP8 function behind the name: the same (invalid) arguments fail the same way in both.
    args, kwargs = wrapper_args(name)
    args = list(args)
    args[2] = T(args[2].shape, 'float32')
    kwargs = {'compiled_dims': 'nk'} if 'gemm_nt' in name or 'gemm_nn' in name else {'compiled_dims': 'mn'}
    messages = []
    for fn in (getattr(deep_gemm, name), getattr(deep_gemm, WRAPPERS[name])):
        with pytest.raises((TypeError, ValueError)) as info:
            fn(*args, **kwargs)
        messages.append((type(info.value), str(info.value)))
    assert messages[0] == messages[1] and re.match(r'^(a|b|d)(\[1\])?: expected', messages[0][1]), messages


@pytest.mark.parametrize('name', sorted(WRAPPERS))
@pytest.mark.parametrize('operand,dtype', [(0, 'int8'), (1, 'int8'), (1, 'uint8'), (0, 'float4_e2m1fn_x2')])
def test_fp8_fp4_names_refuse_packed_fp4_operands_by_name(name, operand, dtype, monkeypatch):
    monkeypatch.setattr(deep_gemm._fp8, WRAPPERS[name], lambda *a, **k: pytest.fail('the FP8 GEMM was called'))
    args, kwargs = wrapper_args(name)
    args = list(args)
    data, sf = args[operand]
    packed = T(data.shape[:-1] + (data.shape[-1] // 2, ), dtype)
    args[operand] = (packed, sf)
    with pytest.raises(ValueError) as info:
        getattr(deep_gemm, name)(*args, **kwargs)
    message = str(info.value)
    assert message.startswith(('a', 'b')[operand] + ': expected float8_e4m3fn data'), message
    assert 'no FP4 GEMM kernel on SM90' in message and f'packed FP4 {dtype} {packed.shape}' in message


def test_legacy_masked_aliases_are_the_masked_gemms():
    assert deep_gemm.fp8_m_grouped_gemm_nt_masked is deep_gemm.m_grouped_fp8_gemm_nt_masked
    assert deep_gemm.bf16_m_grouped_gemm_nt_masked is deep_gemm.m_grouped_bf16_gemm_nt_masked


def test_alignment_settings_take_what_deepgemms_sm90_tests_pass():
    # test_bf16/test_fp8_fp4: set(get_theoretical(expected_m)) for each group size; generators: set(128) on SM90.
    for expected_m in (None, 0, 20, 192, 1024, 4096, 8192, int(8192 * 1.2)):
        alignment = deep_gemm.get_theoretical_mk_alignment_for_contiguous_layout(expected_m)
        assert alignment == 128
        deep_gemm.set_mk_alignment_for_contiguous_layout(alignment)
        assert deep_gemm.get_mk_alignment_for_contiguous_layout() == alignment
    assert deep_gemm.get_theoretical_mk_alignment_for_contiguous_layout() == 128
    assert deep_gemm.get_m_alignment_for_contiguous_layout() == deep_gemm.get_k_alignment_for_contiguous_layout() == 128
    assert deep_gemm.utils.get_mk_alignment_for_contiguous_layout() == 128


@pytest.mark.parametrize('value', [32, 64, 160, 192, 224, 256, 0, -128])
def test_alignments_the_kernels_cannot_honour_are_refused(value):
    with pytest.raises(ValueError, match='^new_value: expected'):
        deep_gemm.set_mk_alignment_for_contiguous_layout(value)
    assert deep_gemm.get_mk_alignment_for_contiguous_layout() == 128


def test_alignment_setting_type_errors_name_the_argument():
    for value in (128.0, '128', True, None):
        with pytest.raises(TypeError, match='^new_value: expected an int'):
            deep_gemm.set_mk_alignment_for_contiguous_layout(value)
    with pytest.raises(TypeError, match='^expected_m: expected an int'):
        deep_gemm.get_theoretical_mk_alignment_for_contiguous_layout(1.5)
    with pytest.raises(ValueError, match='^expected_m: expected an int >= 0, got -1'):
        deep_gemm.get_theoretical_mk_alignment_for_contiguous_layout(-1)


def test_set_num_sms_names_its_argument():
    with pytest.raises(ValueError, match=r'^new_num_sms: expected an int in \[1, 2147483647\], got -1'):
        deep_gemm.set_num_sms(-1)
    with pytest.raises(TypeError, match='^new_num_sms: expected an int'):
        deep_gemm.set_num_sms('132')
