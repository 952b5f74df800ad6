"""deep_gemm's names against DeepGEMM 2.6.1's own source text: every name DeepGEMM exports (top level, utils,
utils.math, utils.dist, testing) exists here with the same parameters and defaults, or is listed below as
intentionally absent with the reason; and every ``from deep_gemm... import`` and ``deep_gemm.<name>`` in
DeepGEMM's test files resolves, except those absent names.

DeepGEMM's source is read, never imported (it needs torch and its CUDA extension): Python files with ``ast``,
the pybind definitions in csrc/apis/*.hpp with a small parser. It is looked for next to the repository
(../shared/peers/deepgemm-2.6.1, as CI and the dev machines have it) or at $DEEPGEMM_SRC; without it these tests
skip, saying so.
"""
import ast
import importlib
import inspect
import os
import pathlib
import re

import pytest

import deep_gemm

ROOT = pathlib.Path(__file__).resolve().parents[2]
CANDIDATES = [os.environ.get('DEEPGEMM_SRC', ''), ROOT.parent / 'shared' / 'peers' / 'deepgemm-2.6.1']
PEER = next((pathlib.Path(p) for p in CANDIDATES if p and (pathlib.Path(p) / 'deep_gemm' / '__init__.py').is_file()),
            None)
needs_peer = pytest.mark.skipif(PEER is None, reason='DeepGEMM 2.6.1 source not found at ../shared/peers/'
                                'deepgemm-2.6.1 or $DEEPGEMM_SRC: nothing to compare the names with')

# What DeepGEMM 2.6.1 exports that has no kernel here (SM90), and why. Present names must not be stubs.
ABSENT = {
    'k_grouped_fp8_gemm_tn_contiguous': 'MN-major K-grouped FP8 is SM100-only in DeepGEMM (SM90 is unreachable)',
    'SymmBuffer': 'mega MoE (multi-GPU fused MoE) is not implemented',
    'get_symm_buffer_for_mega_moe': 'mega MoE (multi-GPU fused MoE) is not implemented',
    'transform_weights_for_mega_moe': 'mega MoE (multi-GPU fused MoE) is not implemented',
    'fp8_fp4_mega_moe': 'mega MoE (multi-GPU fused MoE) is not implemented',
    'bf16_mega_moe': 'mega MoE (multi-GPU fused MoE) is not implemented',
    'legacy': "DeepGEMM's Triton kernels for A100 (deep_gemm.legacy) are not part of an SM90 library",
}
# Pybind functions bound with neither py::arg nor a lambda: their parameters are unnamed in DeepGEMM.
UNNAMED = object()


def _py_default(node):
    return inspect.Parameter.empty if node is None else ast.literal_eval(node)


def python_signatures(path):
    """{name: [(kind, name, default)]} of the public functions a DeepGEMM Python file defines."""
    tree = ast.parse(path.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith('_'):
            args = node.args
            positional = args.posonlyargs + args.args
            defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
            params = [('POSITIONAL_OR_KEYWORD', a.arg, _py_default(d)) for a, d in zip(positional, defaults)]
            if args.vararg:
                params.append(('VAR_POSITIONAL', args.vararg.arg, inspect.Parameter.empty))
            params += [('KEYWORD_ONLY', a.arg, _py_default(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
            out[node.name] = params
        elif isinstance(node, ast.ClassDef) and not node.name.startswith('_'):
            out[node.name] = 'class'
    return out


def _cpp_default(text):
    text = text.strip()
    simple = {'std::nullopt': None, 'false': False, 'true': True}
    if text in simple:
        return simple[text]
    if re.fullmatch(r'-?\d+', text):
        return int(text)
    if re.fullmatch(r'"[^"]*"', text):
        return text[1:-1]
    tuple_match = re.fullmatch(r'std::make_tuple\(([-\d,\s]+)\)', text)
    if tuple_match:
        return tuple(int(v) for v in tuple_match.group(1).split(','))
    dtype = re.fullmatch(r'torch::k(Float32|BFloat16)', text)
    if dtype:  # compared with str() of ours (a torch.dtype, or _mqa_logits' stand-in that prints as torch.float32)
        return TorchDtype({'Float32': 'torch.float32', 'BFloat16': 'torch.bfloat16'}[dtype.group(1)])
    return text  # a C++ value with no Python literal: compared as text, so it never matches


class TorchDtype(str):
    """A torch dtype default of DeepGEMM's pybind text, by name (the test runs without torch too)."""


def _split_top_level(text):
    """Splits at commas outside (), <> and quotes."""
    parts, depth, current, quoted = [], 0, '', False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in '(<':
            depth += 1
        elif not quoted and ch in ')>':
            depth -= 1
        if ch == ',' and depth == 0 and not quoted:
            parts.append(current)
            current = ''
        else:
            current += ch
    return parts + [current] if current.strip() else parts


def pybind_signatures(apis_dir):
    """{name: [(kind, name, default)] or UNNAMED} of DeepGEMM's m.def bindings, plus {alias: target} of its
    m.attr aliases."""
    out, aliases = {}, {}
    for path in sorted(apis_dir.glob('*.hpp')):
        text = path.read_text()
        for match in re.finditer(r'm\.def\("(\w+)",', text):
            # The call's text, up to the parenthesis that closes m.def(.
            depth, end = 1, match.end()
            while depth:
                depth += {'(': 1, ')': -1}.get(text[end], 0)
                end += 1
            body = text[match.end():end - 1]
            args = re.findall(r'py::arg\("(\w+)"\)((?:\s*=\s*(?:std::make_tuple\([^)]*\)|[^,]+?))?)\s*(?:,|$)',
                              body.strip())
            if args:
                out[match.group(1)] = [('POSITIONAL_OR_KEYWORD', name,
                                        _cpp_default(default.split('=', 1)[1]) if default else inspect.Parameter.empty)
                                       for name, default in args]
            elif body.lstrip().startswith('[&]('):
                inner = body[body.index('(') + 1:]
                params = inner[:inner.index(')')]
                count = len(_split_top_level(params)) if params.strip() else 0
                out[match.group(1)] = [('POSITIONAL_ONLY', f'arg{i}', inspect.Parameter.empty) for i in range(count)]
            else:
                out[match.group(1)] = UNNAMED
        aliases.update(re.findall(r'm\.attr\("(\w+)"\)\s*=\s*m\.attr\("(\w+)"\)', text))
    return out, aliases


def python_aliases(path):
    """{alias: target} of the module-level ``a = b`` assignments of a DeepGEMM Python file."""
    tree = ast.parse(path.read_text())
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value.id
    return out


def imported_names(path, module):
    """Names a DeepGEMM file imports from the package module ``module`` ('_C', 'mega'), by a relative import."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == module and node.level >= 1:
            names += [a.asname or a.name for a in node.names]
    return names


def ours(params):
    """Our signature in the form the parsers give."""
    out = []
    for p in params.values():
        kind = 'POSITIONAL_OR_KEYWORD' if p.kind is p.POSITIONAL_OR_KEYWORD else p.kind.name
        default = p.default
        if repr(default).startswith('torch.') and not isinstance(default, str):
            default = TorchDtype(repr(default))
        out.append((kind, p.name, default))
    return out


def expected_surface():
    """{(module, name): DeepGEMM's signature} for every public name DeepGEMM 2.6.1 exports."""
    package = PEER / 'deep_gemm'
    bound, attr_aliases = pybind_signatures(PEER / 'csrc' / 'apis')
    for alias, target in attr_aliases.items():
        bound[alias] = bound[target]
    init_aliases = python_aliases(package / '__init__.py')
    layout_aliases = python_aliases(package / 'utils' / 'layout.py')
    surface = {}
    top_level = imported_names(package / '__init__.py', '_C') + imported_names(package / '__init__.py', 'mega')
    for name in top_level:
        surface[('deep_gemm', name)] = bound.get(name, UNNAMED)
    for alias, target in init_aliases.items():
        if target in bound:
            surface[('deep_gemm', alias)] = bound[target]
    layout_names = imported_names(package / 'utils' / 'layout.py', '_C')
    for name in layout_names:
        surface[('deep_gemm.utils', name)] = bound.get(name, UNNAMED)
    for alias, target in layout_aliases.items():
        surface[('deep_gemm.utils', alias)] = bound[target]
    for name, sig in python_signatures(package / 'utils' / 'math.py').items():
        surface[('deep_gemm.utils.math', name)] = sig
        surface[('deep_gemm.utils', name)] = sig
    for name, sig in python_signatures(package / 'utils' / 'dist.py').items():
        surface[('deep_gemm.utils.dist', name)] = sig
    for module in ('bench', 'numeric', 'utils'):
        for name, sig in python_signatures(package / 'testing' / f'{module}.py').items():
            surface[('deep_gemm.testing', name)] = sig
    # DeepGEMM's top level star-imports utils (init_dist and uneven_all_gather come from utils.dist).
    for (module, name), sig in list(surface.items()):
        if module == 'deep_gemm.utils':
            surface[('deep_gemm', name)] = sig
    for name in ('init_dist', 'uneven_all_gather'):
        surface[('deep_gemm.utils', name)] = surface[('deep_gemm', name)] = surface[('deep_gemm.utils.dist', name)]
    return surface


SURFACE = expected_surface() if PEER is not None else {}


@needs_peer
def test_the_surface_was_read():
    # A parser that silently found nothing would make the tests below vacuous.
    names = {name for _, name in SURFACE}
    for name in ('fp8_fp4_gemm_nt', 'fp8_gemm_nt', 'm_grouped_fp8_fp4_gemm_nt_masked', 'fp8_m_grouped_gemm_nt_masked',
                 'set_mk_alignment_for_contiguous_layout', 'per_token_cast_to_fp4', 'bench_kineto', 'ignore_env',
                 'get_m_alignment_for_contiguous_layout', 'init_dist'):
        assert name in names, name
    assert SURFACE[('deep_gemm', 'fp8_fp4_gemm_nt')][-1] == ('POSITIONAL_OR_KEYWORD', 'disable_ue8m0_cast', False)
    assert len(SURFACE) > 80


@needs_peer
@pytest.mark.parametrize('module,name', sorted(SURFACE) if SURFACE else [('', '')])
def test_every_deepgemm_name_is_here_with_its_signature_or_absent_on_purpose(module, name):
    expected = SURFACE[(module, name)]
    target = importlib.import_module(module)
    if name in ABSENT:
        assert not hasattr(target, name), f'{module}.{name} is listed absent ({ABSENT[name]}) but exists'
        return
    assert hasattr(target, name), f'{module}.{name} is missing'
    ours_obj = getattr(target, name)
    if expected == 'class':
        assert inspect.isclass(ours_obj) and hasattr(ours_obj, '__enter__') and hasattr(ours_obj, '__exit__')
        return
    assert callable(ours_obj)
    if expected is UNNAMED:
        return  # DeepGEMM gives its parameters no names: callers can only pass them by position
    params = ours(inspect.signature(ours_obj).parameters)
    if expected and expected[0][0] == 'POSITIONAL_ONLY':
        # A pybind lambda: positional parameters without names; ours must take as many, all required.
        assert len(params) == len(expected), (params, expected)
        assert all(default is inspect.Parameter.empty for _, _, default in params), params
        return
    assert params == expected


def deepgemm_test_references():
    """(file, module, name) of every deep_gemm name DeepGEMM's test files import or read as deep_gemm.<name>."""
    refs = set()
    for path in sorted((PEER / 'tests').glob('*.py')):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split('.')[0] == 'deep_gemm':
                refs.update((path.name, node.module, a.name) for a in node.names)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.value.id == 'deep_gemm' and not node.attr.startswith('__'):
                refs.add((path.name, 'deep_gemm', node.attr))
    return sorted(refs)


REFERENCES = deepgemm_test_references() if PEER is not None else []


@needs_peer
def test_the_test_files_were_read():
    assert ('generators.py', 'deep_gemm.utils', 'per_token_cast_to_fp4') in REFERENCES
    assert ('test_fp8_fp4.py', 'deep_gemm', 'fp8_fp4_gemm_nt') in REFERENCES
    assert ('test_einsum.py', 'deep_gemm.utils.math', 'per_block_cast_to_fp8') in REFERENCES


@needs_peer
@pytest.mark.parametrize('path,module,name', REFERENCES or [('', '', '')])
def test_deepgemm_test_files_find_every_name_we_implement(path, module, name):
    if name in ABSENT:
        assert not hasattr(importlib.import_module(module), name)
        pytest.skip(f'{path}: {module}.{name} is absent on purpose: {ABSENT[name]}')
    target = importlib.import_module(module)
    assert hasattr(target, name), f'{path} needs {module}.{name}'


def test_names_older_deepgemm_had_are_not_invented():
    # get_col_major_tma_aligned_tensor is DeepGEMM 1.x's name (2.6.1 has only get_mn_major_tma_aligned_tensor);
    # code that probes for it to pick the 1.x API (gemm_fp8_fp8_bf16_nt, ...) must not take that path here.
    for name in ('get_col_major_tma_aligned_tensor', 'gemm_fp8_fp8_bf16_nt', 'm_grouped_gemm_fp8_fp8_bf16_nt_masked'):
        assert not hasattr(deep_gemm, name), name
