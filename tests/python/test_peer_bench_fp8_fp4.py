"""The peer benchmark's fp8_fp4 suite (the SM90 FP8 x FP4 GEMM against FP8 x FP8) on the CPU: its shapes, the FP4
cast of the weights against DeepGEMM's rules, the FP8 / ours rate and the report's table."""
import pytest

from deep_gemm.bench import cli, report, suites

torch = pytest.importorskip('torch', reason='the suite casts its weights with torch')


def test_fp8_fp4_suite_covers_the_deepseek_shapes_to_prefill():
    cases = [c for c in suites.SUITES['fp8_fp4'] if not hasattr(c, 'groups')]
    assert {c.m for c in cases} == {1, 16, 32, 64, 128, 4096}
    assert all(c.k % 128 == 0 for c in cases) and 'fp8_fp4' in suites.DTYPE_FREE
    [(suite, dtype, selected)] = cli.plan(cli.parse_args(['--no-peer', '--suite', 'fp8_fp4', '--shapes', '16x*']))
    assert (suite, dtype) == ('fp8_fp4', None) and len(selected) == len(suites.DEEPSEEK_NK)
    moe = [c for c in suites.SUITES['fp8_fp4'] if hasattr(c, 'groups')]
    assert {(c.groups, c.n, c.k) for c in moe} == {(32, 4096, 7168), (32, 7168, 2048)}
    assert {c.expected_m for c in moe} == {1, 8, 32} and all(c.max_m >= 2 * c.expected_m for c in moe)


def test_fp4_cast_rounds_each_group_to_e2m1_times_a_power_of_two():
    from deep_gemm.bench.fp8_fp4_suite import cast_to_fp4
    g = torch.Generator().manual_seed(3)
    w = torch.randn(8, 128, generator=g) * torch.logspace(-2, 2, 8)[:, None]
    packed, scale = cast_to_fp4(torch, w)
    assert packed.dtype == torch.int8 and packed.shape == (8, 64) and scale.shape == (8, 4)
    assert torch.equal(torch.exp2(torch.log2(scale).round()), scale)  # UE8M0
    amax = w.view(8, 4, 32).abs().amax(dim=2)
    assert (amax / scale <= 6).all() and (amax / scale > 3).all()  # the smallest power of two at or above amax / 6
    codes = torch.stack([packed.view(torch.uint8) & 15, packed.view(torch.uint8) >> 4], dim=2).view(8, 128).long()
    values = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])[codes]
    deq = values.view(8, 4, 32) * scale[:, :, None]
    # Round to nearest: within half of the widest step (2 at the top of the range) of the group's scale.
    assert ((deq - w.view(8, 4, 32)).abs() <= scale[:, :, None] * 1.0).all()
    grid = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6])
    nearest = (w.view(8, 4, 32).abs() / scale[:, :, None])[..., None].sub(grid).abs().min(dim=-1).values
    assert torch.allclose((deq.abs() / scale[:, :, None] - w.view(8, 4, 32).abs() / scale[:, :, None]).abs(), nearest)


def test_table_shows_the_fp8_speed_up():
    from deep_gemm.bench.fp8_fp4_suite import add_rates

    def result(us):
        return {'status': 'ok', 'message': None, 'label': None, 'diff': 1e-3, 'us': us}
    row = add_rates({'shape': '16x2112x7168', 'flops': 1, 'bytes': 1, 'params': {'m': 16, 'n': 2112, 'k': 7168},
                     'results': {'ours': result(10.0), 'ours_fp8': result(16.0), 'ours_mxfp8': result(16.8)},
                     'ratio_vs_deepgemm': None,
                     'ratio_vs_cublas': None})
    assert row['ratio_vs_fp8'] == pytest.approx(1.6)
    assert row['mxfp8_vs_fp8'] == pytest.approx(16 / 16.8)
    text = report.markdown({'environment': {'ours': {'version': 'x'}, 'timer': 't', 'rounds': 2,
                                            'round_combine': 'mean'}, 'sections': [report.section('fp8_fp4', None, [row])]})
    assert '| 16 | 2112 | 7168 |' in text and '1.60' in text


def test_mxfp8_cast_scales_each_group_by_a_power_of_two():
    from deep_gemm.bench.fp8_fp4_suite import cast_to_mxfp8
    x = torch.randn(4, 128, generator=torch.Generator().manual_seed(5)) * 100
    q, scale = cast_to_mxfp8(torch, x)
    assert q.dtype == torch.float8_e4m3fn and scale.shape == (4, 4)
    assert torch.equal(torch.exp2(torch.log2(scale).round()), scale)
    amax = x.view(4, 4, 32).abs().amax(dim=2)
    assert (amax / scale <= 448).all() and (amax / scale > 224).all()
    deq = q.float().view(4, 4, 32) * scale[:, :, None]
    assert ((deq - x.view(4, 4, 32)).abs() <= deq.abs().clamp_min(scale[:, :, None] * 2**-9) * 2**-3).all()
