"""Loading DeepGEMM beside our package in one process. Both are called `deep_gemm`: ours stays imported (this
bench is part of it), DeepGEMM is imported from its folder with ours taken out of sys.modules for the moment,
and then every `deep_gemm*` entry is put back as it was, so each package keeps resolving its own modules."""
import importlib
import importlib.util
import os
import sys

PACKAGE = 'deep_gemm'


def _is_package_entry(name):
    return name == PACKAGE or name.startswith(PACKAGE + '.')


def _under(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([path, folder]) == folder


def load_peer(folder):
    """DeepGEMM's module object, imported from folder (a directory holding a `deep_gemm` package). The package is
    loaded from its file, so an import hook that maps `deep_gemm` to ours (an editable install) cannot answer."""
    init = os.path.join(folder, PACKAGE, '__init__.py')
    if not os.path.isfile(init):
        raise ValueError(f'deepgemm: expected a folder that holds a {PACKAGE}/ package, got {folder!r}')
    folder = os.path.abspath(folder)
    ours = {name: module for name, module in sys.modules.items() if _is_package_entry(name)}
    saved_path = list(sys.path)
    for name in ours:
        del sys.modules[name]
    sys.path.insert(0, folder)
    try:
        importlib.invalidate_caches()
        spec = importlib.util.spec_from_file_location(PACKAGE, os.path.join(folder, PACKAGE, '__init__.py'),
                                                      submodule_search_locations=[os.path.join(folder, PACKAGE)])
        peer = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = peer
        spec.loader.exec_module(peer)
    finally:
        for name in [n for n in sys.modules if _is_package_entry(n)]:
            del sys.modules[name]
        sys.modules.update(ours)
        sys.path[:] = saved_path
    for module in (peer, getattr(peer, '_C', None)):
        where = getattr(module, '__file__', None) or ''
        if module is not None and not _under(where, folder):
            raise ValueError(f'deepgemm: expected {PACKAGE} to import from {folder}, but {module.__name__} came '
                             f'from {where!r}')
    return peer


def describe(module):
    """Name, version and location of a loaded package, for the report."""
    return {'version': getattr(module, '__version__', None), 'file': getattr(module, '__file__', None)}


def lookup(module, name):
    """A function of a package by name (top level first, then its utils), or None when it does not export it."""
    found = getattr(module, name, None)
    if found is None:
        found = getattr(getattr(module, 'utils', None), name, None)
    return found
