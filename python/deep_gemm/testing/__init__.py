"""DeepGEMM's test and benchmark helpers, as its deep_gemm.testing exports them: timing (module ``bench``),
numeric comparison (``numeric``) and test selection (``utils``). torch is imported when a helper is called.
As in DeepGEMM, the name ``bench`` ends up bound to the timing function, not to its module."""
from . import bench, numeric, utils

__all__ = bench.__all__ + numeric.__all__ + utils.__all__

from .bench import *  # noqa: E402,F401,F403
from .numeric import *  # noqa: E402,F401,F403
from .utils import *  # noqa: E402,F401,F403
