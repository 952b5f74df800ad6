"""The library's layers, checked on the include lines: the product (tilegemm_core) includes no benchmark, timer or
ladder header; the timer no suite or ladder one; src/core (environment, switches, shared types) is the bottom layer;
kernels do not reach up into the API, nor the JIT into the heuristics; include/tilegemm/ is the public API and
includes only public headers."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / 'src'
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

pytestmark = pytest.mark.skipif(not SRC.is_dir(), reason='needs the source tree')

TOOLS = {'bench', 'ladder'}
TIMER = {'timer'}
INTERNAL = {p.name for p in SRC.iterdir() if p.is_dir()}


def includes(folder, root=ROOT):
    for path in sorted(folder.rglob('*')):
        if path.suffix in ('.cpp', '.hpp', '.h', '.cuh'):
            for name in INCLUDE.findall(path.read_text()):
                yield path.relative_to(root), name


# Public headers that belong to a layer other than the core's.
PUBLIC_LAYER = {'tilegemm/timer.hpp': 'timer'}


def top(name):
    """The layer an include names: its first folder (src/ is on the include path), or a public header's own."""
    return PUBLIC_LAYER.get(name) or (name.split('/', 1)[0] if '/' in name else '')


def violations(folders, forbidden, src=SRC):
    return [(str(path), name) for folder in folders for path, name in includes(src / folder, src.parent)
            if top(name) in forbidden]


def test_the_product_includes_no_tool_or_timer_header():
    core = INTERNAL - TOOLS - TIMER
    assert violations(core, TOOLS | TIMER) == []


def test_the_timer_includes_no_suite_or_ladder_header():
    assert violations(TIMER, TOOLS) == []


def test_core_is_the_bottom_layer():
    assert violations({'core'}, INTERNAL - {'core'}) == []


def test_no_include_reaches_up_a_layer():
    assert violations({'kernels'}, {'api'}) == []
    assert violations({'jit'}, {'heuristics', 'api', 'kernels'}) == []


def test_public_headers_include_only_public_headers():
    bad = [(str(path), name) for path, name in includes(ROOT / 'include' / 'tilegemm')
           if not name.startswith('tilegemm/')]
    assert bad == []


def test_the_check_sees_a_violation(tmp_path):
    (tmp_path / 'src' / 'api').mkdir(parents=True)
    (tmp_path / 'src' / 'api' / 'gemm.cpp').write_text('#include "tilegemm/gemm.hpp"\n#include "tilegemm/timer.hpp"\n'
                                                       '  #  include "bench/bench.hpp"\n')
    assert violations({'api'}, TOOLS | TIMER, tmp_path / 'src') == [
        ('src/api/gemm.cpp', 'tilegemm/timer.hpp'), ('src/api/gemm.cpp', 'bench/bench.hpp')]
