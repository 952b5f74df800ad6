"""What the probes under bench/probes share: their command line and the plan they pin.

A probe takes an optional DeepGEMM folder (the first argument that is not a ``--flag``) and ``--flags``; it pins our
plan through TILEGEMM_CONFIG_FILTER, which deep_gemm reads again after ``_C.reload_env()``.
"""
import os
import sys

from .peer import load_peer

FILTER = 'TILEGEMM_CONFIG_FILTER'


def command_line(argv=None):
    """(DeepGEMM loaded from the first argument that is not a --flag, or None; the set of --flags given)."""
    argv = sys.argv[1:] if argv is None else argv
    folders = [x for x in argv if not x.startswith('--')]
    return (load_peer(folders[0]) if folders else None), {x for x in argv if x.startswith('--')}


def pin(config_filter, **variables):
    """Pins our plan to `config_filter` ('field=value,...'; None, '' or 'default': the selector's own choice) and sets
    the other variables given (e.g. TILEGEMM_GEMM_SCHEME='split-k:4'; None or '' unsets one)."""
    from .. import _C
    for name, value in {FILTER: None if config_filter == 'default' else config_filter, **variables}.items():
        if value:
            os.environ[name] = value
        else:
            os.environ.pop(name, None)
    _C.reload_env()
