"""DeepGEMM's configuration functions. They are process-wide settings read by every later call.

What each one changes in tilegemm (docs/python.md says the same to users):
- set_num_sms: the SM count the heuristics and the persistent grid use (clamped to the device's).
- set_mk_alignment_for_contiguous_layout: only the alignment the kernels implement (128) is accepted; it is also
  what get_theoretical_mk_alignment_for_contiguous_layout returns on SM90, here as in DeepGEMM.
- set_pdl: GEMM kernels are launched with programmatic dependent launch (tilegemm::set_pdl; off by default, as in
  DeepGEMM, unless DG_ENABLE_PDL=1).
- set_tc_util, set_ignore_compile_dims, set_block_size_multiple_of: validated and remembered (the getters return
  them) so DeepGEMM scripts run unchanged; tilegemm's heuristics do not read them yet.
"""
import sys

from . import _C

# The set_num_sms value lives in the extension (_C.num_sms_setting), where every cached call reads it.
_state = {'tc_util': 100, 'ignore_compile_dims': False, 'block_size_multiple_of': (1, 1)}


def _require_int(value, name, low=None, high=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f'{name}: expected an int, got {type(value).__name__} {value!r}')
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f'>= {low}' if high is None else f'in [{low}, {high}]'
        raise ValueError(f'{name}: expected an int {bounds}, got {value}')
    return value


def _require_bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f'{name}: expected a bool, got {type(value).__name__} {value!r}')
    return value


def _current_device():
    torch = sys.modules.get('torch')
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.current_device()
    return 0


num_sms_setting = _C.num_sms_setting  # the SM limit passed to the C++ layer (0: every SM of the device)


# Without a GPU the device's count is unknown; the C++ layer takes the setting as a 32-bit int, so a larger value
# would make every later GEMM call fail with nanobind's argument-type error instead of a message.
_MAX_NUM_SMS_SETTING = 2**31 - 1


def set_num_sms(new_num_sms):
    _require_int(new_num_sms, 'new_num_sms', low=1, high=_MAX_NUM_SMS_SETTING)
    if _C.gpu_available():
        available = _C.device_num_sms(_current_device())
        if new_num_sms > available:
            raise ValueError(f'new_num_sms: expected at most the device\'s {available} SMs, got {new_num_sms}')
    _C.set_num_sms_setting(new_num_sms)


def get_num_sms():
    """The SM count kernels use: the set_num_sms value, else every SM of the current device."""
    if num_sms_setting() > 0:
        return num_sms_setting()
    return _C.device_num_sms(_current_device())


def set_tc_util(new_tc_util):
    _state['tc_util'] = _require_int(new_tc_util, 'new_tc_util', low=1, high=100)


def get_tc_util():
    return _state['tc_util']


def set_pdl(new_enable_pdl):
    """Launch the GEMM kernels with programmatic dependent launch: each may start while the previous kernel on the
    stream finishes (it waits for it before touching any tensor), which hides launch and prologue time between
    back-to-back kernels. Process-wide; results do not change."""
    _C.set_pdl(_require_bool(new_enable_pdl, 'new_enable_pdl'))


def get_pdl():
    return _C.pdl_enabled()


def set_ignore_compile_dims(new_value):
    _state['ignore_compile_dims'] = _require_bool(new_value, 'new_value')


def set_block_size_multiple_of(value):
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)) or len(value) not in (1, 2):
        raise ValueError(f'value: expected one or two ints (block M and N multiples), got {value!r}')
    multiples = [_require_int(v, 'value', low=1) for v in value]
    _state['block_size_multiple_of'] = (multiples[0], multiples[-1])


def set_mk_alignment_for_contiguous_layout(new_value):
    """DeepGEMM sizes its SM90 M-grouped tiles from this setting; tilegemm's kernels have the group alignment
    fixed at 128 rows (K elements for K-grouped), the value DeepGEMM's SM90 theoretical alignment always is.
    Smaller values would put two groups in one 128-row block; larger multiples of 128 would still suit the
    per-row and K-grouped layouts but not the prefix-sum layout, whose group starts the kernels round up to 128
    rather than to the setting. So 128 is accepted and anything else is a ValueError."""
    alignment = _C.mk_alignment()
    _require_int(new_value, 'new_value', low=1)
    if new_value != alignment:
        raise ValueError(f'new_value: expected {alignment} (the only M/K group alignment the SM90 kernels '
                         f'implement; get_theoretical_mk_alignment_for_contiguous_layout() returns it), '
                         f'got {new_value}')


def get_mk_alignment_for_contiguous_layout():
    """The group alignment of contiguous layouts: every group starts at a multiple of it (128)."""
    return _C.mk_alignment()


def get_theoretical_mk_alignment_for_contiguous_layout(expected_m=None):
    """The alignment to set for groups of about ``expected_m`` rows. DeepGEMM returns 128 on SM90 whatever
    expected_m is (only SM100 shrinks its block M for small groups); so does tilegemm."""
    if expected_m is not None:
        _require_int(expected_m, 'expected_m', low=0)
    return _C.mk_alignment()


get_m_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout
get_k_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout
