"""DeepGEMM's helpers and names on the GPU (GPU + torch; skipped otherwise): bench and bench_kineto time tilegemm's
kernels under the names DeepGEMM's tests use ('bf16_gemm', 'gemm_'), the fp8_fp4_* names give the FP8 GEMMs'
results bit for bit, get_arch_major reads Hopper, and utils.dist runs a one-rank NCCL group. Every tensor is
small and bench_kineto runs without its 8 GB L2 flush, so the tests can share the GPU with other workers."""
import os
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch', reason='GPU tests need torch')
import deep_gemm  # noqa: E402
from deep_gemm.testing import bench, bench_kineto, calc_diff, get_arch_major  # noqa: E402
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not deep_gemm._C.gpu_available(),
                                reason='no CUDA GPU')


def rand(*shape):
    return torch.randn(*shape, device='cuda', dtype=torch.bfloat16)


def test_get_arch_major_is_hopper():
    assert get_arch_major() == 9


def test_bench_gives_seconds_per_call():
    a, b = rand(1024, 1024), rand(1024, 1024)
    t = bench(lambda: a @ b, num_warmups=2, num_tests=5)
    # 2 GFLOP: well over 1 us even at peak, well under 10 ms.
    assert 1e-6 < t < 1e-2, t


def test_bench_kineto_times_bf16_kernels_by_deepgemms_name():
    a, b, d = rand(256, 512), rand(384, 512), rand(256, 384)

    def fn():
        deep_gemm.bf16_gemm_nt(a, b, d)

    t = bench_kineto(fn, 'bf16_gemm', num_tests=5, suppress_kineto_output=True, flush_l2=False)
    assert 0 < t < 1e-3, t
    t_pair = bench_kineto(fn, ('bf16_gemm', 'no_such_kernel'), num_tests=5, suppress_kineto_output=True,
                          flush_l2=False)
    assert isinstance(t_pair, tuple) and 0 < t_pair[0] < 1e-3 and t_pair[1] == 0


def fp8_operands(m, n, k):
    a, b = rand(m, k), rand(n, k)
    return a, b, per_token_cast_to_fp8(a, use_ue8m0=False), per_block_cast_to_fp8(b, use_ue8m0=False)


def test_bench_kineto_times_fp8_kernels_by_deepgemms_name():
    _, _, a, b = fp8_operands(256, 384, 512)
    d = torch.empty(256, 384, device='cuda', dtype=torch.bfloat16)
    t = bench_kineto(lambda: deep_gemm.fp8_fp4_gemm_nt(a, b, d), 'gemm_', num_tests=5, suppress_kineto_output=True,
                     flush_l2=False)
    assert 0 < t < 1e-3, t


@pytest.mark.parametrize('m,n,k', [(128, 2112, 7168), (3, 256, 384)])
def test_fp8_fp4_gemm_nt_is_the_fp8_gemm(m, n, k):
    a_ref, b_ref, a, b = fp8_operands(m, n, k)
    d_alias, d_fp8 = (torch.empty(m, n, device='cuda', dtype=torch.bfloat16) for _ in range(2))
    deep_gemm.fp8_fp4_gemm_nt(a, b, d_alias)
    deep_gemm.fp8_gemm_nt(a, b, d_fp8)
    assert torch.equal(d_alias, d_fp8)
    assert float(calc_diff(d_alias.float(), a_ref.float() @ b_ref.float().T)) < 1e-3


def test_m_grouped_fp8_fp4_names_are_the_fp8_gemms():
    groups, m_per_group, n, k = 2, 128, 256, 512
    a = per_token_cast_to_fp8(rand(groups * m_per_group, k), use_ue8m0=False)
    b_bf16 = rand(groups, n, k)
    b_parts = [per_block_cast_to_fp8(b_bf16[g], use_ue8m0=False) for g in range(groups)]
    b = (torch.stack([p[0] for p in b_parts]), torch.stack([p[1] for p in b_parts]))
    layout = torch.arange(groups, device='cuda', dtype=torch.int32).repeat_interleave(m_per_group)
    outputs = []
    for fn in (deep_gemm.m_grouped_fp8_fp4_gemm_nt_contiguous, deep_gemm.m_grouped_fp8_gemm_nt_contiguous):
        d = torch.empty(groups * m_per_group, n, device='cuda', dtype=torch.bfloat16)
        fn(a, b, d, layout)
        outputs.append(d)
    assert torch.equal(*outputs)

    masked_a = (a[0].view(groups, m_per_group, k), a[1].view(groups, m_per_group, -1))
    masked_m = torch.tensor([100, 7], device='cuda', dtype=torch.int32)
    outputs = []
    for fn in (deep_gemm.m_grouped_fp8_fp4_gemm_nt_masked, deep_gemm.fp8_m_grouped_gemm_nt_masked,
               deep_gemm.m_grouped_fp8_gemm_nt_masked):
        d = torch.zeros(groups, m_per_group, n, device='cuda', dtype=torch.bfloat16)
        fn(masked_a, b, d, masked_m, 128)
        outputs.append(d)
    assert torch.equal(outputs[0], outputs[2]) and torch.equal(outputs[1], outputs[2])


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


DIST = """
import torch, torch.distributed as dist
from deep_gemm.utils.dist import init_dist, uneven_all_gather, dist_print
rank, world_size, group = init_dist(0, 1)
x = torch.arange(6, dtype=torch.float32).view(3, 2)  # init_dist made cuda the default device
y = uneven_all_gather(x, dim=0, group=group)
assert x.is_cuda and torch.equal(x, y), (x, y)
dist_print(f'rank {rank} of {world_size}', once_in_node=True)
dist.destroy_process_group()
"""


def test_init_dist_and_uneven_all_gather_on_one_rank():
    env = {**os.environ, 'MASTER_ADDR': '127.0.0.1', 'MASTER_PORT': str(free_port()), 'WORLD_SIZE': '1', 'RANK': '0'}
    out = subprocess.run([sys.executable, '-c', DIST], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-4000:]
    assert 'rank 0 of 1' in out.stdout.splitlines()
