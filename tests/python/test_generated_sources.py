"""Generated sources are what their generators write: device/tilegemm/prim/wgmma_ops.cuh comes from
scripts/gen_wgmma.py (one inline-asm wrapper per wgmma shape), and an edit of either alone fails here."""
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GENERATOR = ROOT / 'scripts' / 'gen_wgmma.py'


@pytest.mark.skipif(not GENERATOR.is_file(), reason='needs the source tree')
def test_the_wgmma_header_is_the_generators_output():
    run = subprocess.run([sys.executable, str(GENERATOR), '--check'], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.skipif(not GENERATOR.is_file(), reason='needs the source tree')
def test_the_check_fails_on_a_header_that_differs(tmp_path):
    # The generator's check against a copy of the tree whose header lost a line.
    tree = tmp_path / 'tree'
    (tree / 'scripts').mkdir(parents=True)
    (tree / 'device/tilegemm/prim').mkdir(parents=True)
    (tree / 'scripts/gen_wgmma.py').write_text(GENERATOR.read_text())
    header = (ROOT / 'device/tilegemm/prim/wgmma_ops.cuh').read_text().splitlines(keepends=True)
    (tree / 'device/tilegemm/prim/wgmma_ops.cuh').write_text(''.join(header[:-1]))
    run = subprocess.run([sys.executable, str(tree / 'scripts/gen_wgmma.py'), '--check'], capture_output=True,
                         text=True)
    assert run.returncode == 1 and 'is not what scripts/gen_wgmma.py generates' in run.stderr, run.stderr
