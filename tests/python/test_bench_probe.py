"""deep_gemm.bench.probe, what the probes under bench/probes share: their command line and the plan they pin."""
import os

import pytest

from deep_gemm.bench import probe


def test_flags_and_no_peer():
    assert probe.command_line(['--quick', '--large']) == (None, {'--quick', '--large'})
    assert probe.command_line([]) == (None, set())


def test_a_folder_without_deepgemm_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match='deepgemm: expected a folder that holds a deep_gemm/ package'):
        probe.command_line([str(tmp_path), '--quick'])


def test_pin_sets_and_clears_the_filter(monkeypatch):
    monkeypatch.delenv(probe.FILTER, raising=False)
    monkeypatch.delenv('TILEGEMM_GEMM_SCHEME', raising=False)
    try:
        probe.pin('split_k=2,cluster_m=2')
        assert os.environ[probe.FILTER] == 'split_k=2,cluster_m=2'
        for default in ('default', '', None):
            probe.pin('block_m=64')
            probe.pin(default)
            assert probe.FILTER not in os.environ
        probe.pin('swap_ab=1', TILEGEMM_GEMM_SCHEME='split-k:4')
        assert (os.environ[probe.FILTER], os.environ['TILEGEMM_GEMM_SCHEME']) == ('swap_ab=1', 'split-k:4')
        probe.pin('default', TILEGEMM_GEMM_SCHEME=None)
        assert probe.FILTER not in os.environ and 'TILEGEMM_GEMM_SCHEME' not in os.environ
    finally:
        probe.pin(None, TILEGEMM_GEMM_SCHEME=None)
