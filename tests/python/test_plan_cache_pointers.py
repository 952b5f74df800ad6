"""The fast path hands the C++ plan each tensor's pointer in the order the plan's checks saw the tensors.

The extension's plan_* functions are replaced by recorders: the first call (the checks) gives the order of the
views, a second call with other tensors of the same signature must pass those tensors' pointers in that order.
A pointer passed for the wrong operand would make a kernel read the wrong memory, which only a GPU run would
show otherwise. Stand-in tensors; nothing reaches the library.
"""
import pytest

import deep_gemm
from deep_gemm import _fp8, _gemm
from test_plan_cache import f32, fp8, i32, t  # stand-ins with get_device() and their own addresses

M, N, K = 256, 512, 384
KB = K // 128


class RecordingPlan:
    def __init__(self, views):
        self.planned = [0 if v is None else v[0] for v in views]
        self.runs = []

    def first_launch(self, stream, num_sms, pointers):
        assert list(pointers) == self.planned  # the slow path runs the plan on the checked pointers
        self.runs.append(list(pointers))
        return True

    def launch(self, stream, num_sms, *pointers):
        self.runs.append(list(pointers))
        return True


class RecordingC:
    """Stands in for deep_gemm._C's plan factories; the views arrive in the C++ plan's tensor order."""

    def __init__(self):
        self.plans = []

    def _plan(self, *views):
        plan = RecordingPlan(views)
        self.plans.append(plan)
        return plan

    def plan_bf16_gemm(self, a, b, d, c, device, num_sms):
        return self._plan(a, b, d, c)

    def plan_m_grouped_contiguous(self, a, b, d, layout, use_psum_layout, device, num_sms):
        return self._plan(a, b, d, layout)

    def plan_m_grouped_masked(self, a, b, d, masked_m, expected_m, device, num_sms):
        return self._plan(a, b, d, masked_m)

    def plan_k_grouped_tn(self, a, b, d, ks, layout, c, device, num_sms):
        return self._plan(a, b, d, layout, c)

    def plan_fp8_gemm(self, a, sfa, b, sfb, d, c, one_d_one_d, device, num_sms):
        return self._plan(a, sfa, b, sfb, d, c)

    def plan_m_grouped_fp8_contiguous(self, a, sfa, b, sfb, d, layout, use_psum_layout, expected_m, device, num_sms):
        return self._plan(a, sfa, b, sfb, d, layout)

    def plan_m_grouped_fp8_masked(self, a, sfa, b, sfb, d, masked_m, expected_m, device, num_sms):
        return self._plan(a, sfa, b, sfb, d, masked_m)


@pytest.fixture
def recorder(monkeypatch):
    fake = RecordingC()
    monkeypatch.setattr(_gemm, '_C', fake)
    monkeypatch.setattr(_fp8, '_C', fake)
    deep_gemm._clear_plan_cache()
    yield fake
    deep_gemm._clear_plan_cache()


def ptr(x):
    return 0 if x is None else x.data_ptr()


# Each case: the call, and the tensors of its arguments in the C++ plan's order.
def cases():
    def bf16_nt():
        a, b, d = t(M, K), t(N, K), t(M, N)
        return lambda: deep_gemm.bf16_gemm_nt(a, b, d), [a, b, d, None]

    def bf16_tn_c():
        a, b, d, c = t(K, M), t(K, N), f32(M, N), f32(M, N)
        return lambda: deep_gemm.bf16_gemm_tn(a, b, d, c=c), [a, b, d, c]

    def bf16_m_grouped_contiguous():
        a, b, d, layout = t(M, K), t(2, N, K), t(M, N), i32(M)
        return lambda: deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout), [a, b, d, layout]

    def bf16_m_grouped_masked():
        a, b, d, masked_m = t(4, 64, K), t(4, N, K), t(4, 64, N), i32(4)
        return lambda: deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 32), [a, b, d, masked_m]

    def bf16_k_grouped_c():
        a, b, d, layout, c = t(256, M), t(256, N), f32(2, M, N), i32(2), f32(2, M, N)
        return (lambda: deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, [128, 128], layout, c=c),
                [a, b, d, layout, c])

    def fp8_1d1d_c():
        a, sfa, b, sfb, d, c = fp8(M, K), f32(M, KB), fp8(N, K), f32(N, KB), f32(M, N), f32(M, N)
        return (lambda: deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c=c, recipe=(1, 1, 128)),
                [a, sfa, b, sfb, d, c])

    def fp8_tt():
        a, sfa, b, sfb, d = fp8(M, K), f32(M, KB), fp8(N, K), f32(N // 128, KB), t(M, N)
        return lambda: deep_gemm.fp8_gemm_tt((a.T, sfa.T), (b, sfb), d), [a, sfa, b, sfb, d, None]

    def fp8_m_grouped_contiguous():
        a, sfa, b, sfb, d, layout = fp8(M, K), f32(M, KB), fp8(2, N, K), f32(2, N // 128, KB), t(M, N), i32(M)
        return (lambda: deep_gemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, layout),
                [a, sfa, b, sfb, d, layout])

    def fp8_m_grouped_masked():
        a, sfa, b, sfb = fp8(4, 64, K), f32(4, 64, KB), fp8(4, N, K), f32(4, N // 128, KB)
        d, masked_m = t(4, 64, N), i32(4)
        return (lambda: deep_gemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, masked_m, 32),
                [a, sfa, b, sfb, d, masked_m])

    return {f.__name__: f for f in (bf16_nt, bf16_tn_c, bf16_m_grouped_contiguous, bf16_m_grouped_masked,
                                    bf16_k_grouped_c, fp8_1d1d_c, fp8_tt, fp8_m_grouped_contiguous,
                                    fp8_m_grouped_masked)}


@pytest.mark.parametrize('name', cases())
def test_the_fast_path_passes_pointers_in_the_plans_order(recorder, name):
    first, first_tensors = cases()[name]()
    first()
    assert len(recorder.plans) == 1
    plan = recorder.plans[0]
    assert plan.planned == [ptr(x) for x in first_tensors]
    second, second_tensors = cases()[name]()  # same signature, every tensor at another address
    second()
    assert len(recorder.plans) == 1, 'the second call made a plan of its own'
    assert plan.runs[-1][:len(second_tensors)] == [ptr(x) for x in second_tensors]
    assert all(p == 0 for p in plan.runs[-1][len(second_tensors):])


@pytest.mark.parametrize('fn', [deep_gemm.m_grouped_bf16_gemm_nt_contiguous,
                                deep_gemm.m_grouped_fp8_gemm_nt_contiguous])
def test_ensure_zero_padding_launches_nothing(recorder, fn):
    # As DeepGEMM 2.6.1 on SM90: the flag is checked, and the GEMM is the only work (here: no torch op at all,
    # which on these stand-ins, without torch, could not run).
    if fn is deep_gemm.m_grouped_bf16_gemm_nt_contiguous:
        args = t(M, K), t(2, N, K), t(M, N), i32(M)
    else:
        args = (fp8(M, K), f32(M, KB)), (fp8(2, N, K), f32(2, N // 128, KB)), t(M, N), i32(M)
    fn(*args, ensure_zero_padding=True)
    fn(*args, ensure_zero_padding=True)
    assert len(recorder.plans) == 1 and len(recorder.plans[0].runs) == 2
