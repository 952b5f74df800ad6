"""The per-call fast path in C++ (_C.run_kept, _C.tensors_key): what a signature holds, and that anything it cannot
read sends the call to its checks instead of failing or launching. Stand-in tensors (and torch CPU tensors where
torch is installed, read through torch's own C accessors); nothing reaches a GPU."""
import pytest

from deep_gemm import _C
from conftest import FakeTensor as T

try:
    import torch
except ImportError:
    torch = None


def key(*tensors):
    return _C.tensors_key(*tensors)


def test_a_signature_holds_shape_strides_dtype_and_device_but_not_the_pointer():
    base = T((64, 128), 'bfloat16', ptr=0x7F0000000000)
    assert key(base) == key(T((64, 128), 'bfloat16', ptr=0x7F0000010000))
    for other in (T((64, 256), 'bfloat16'), T((64, 128), 'float32'), T((64, 128), 'bfloat16', index=1),
                  T((64, 128), 'bfloat16', strides=(256, 1)), T((64, 128), 'bfloat16', device='cpu'),
                  T((64, 1, 128), 'bfloat16')):
        assert key(other) != key(base)


def test_absent_tensors_and_their_places_are_part_of_the_signature():
    a, b = T((8, 8)), T((8, 8), 'float32')
    assert key(a, None) != key(a, a)
    assert key(a, None, b) != key(a, b, None)


class Broken(T):
    def __init__(self, what):
        super().__init__((8, 8))
        self.what = what

    def stride(self):
        if self.what == 'stride':
            raise RuntimeError('no strides')
        return super().stride()

    def data_ptr(self):
        return -1 if self.what == 'negative pointer' else 1.5 if self.what == 'float pointer' else super().data_ptr()


@pytest.mark.parametrize('bad', [object(), 3, 'a', T((8.0, 8)), T((True, 8)), Broken('stride'),
                                 Broken('negative pointer'), Broken('float pointer')],
                         ids=['object', 'int', 'str', 'float size', 'bool size', 'stride raises', 'negative pointer',
                              'float pointer'])
def test_what_is_not_a_tensor_has_no_signature_and_runs_no_plan(bad):
    assert key(bad) is None
    assert key(T((8, 8)), bad) is None
    table = {}
    assert _C.run_kept(table, ('p', ), bad) is False


class Entry:
    def __init__(self, result=True, error=None):
        self.calls, self.result, self.error = [], result, error

    def launch(self, stream, num_sms, *pointers):
        self.calls.append((num_sms, pointers))
        if self.error:
            raise self.error
        return self.result


def test_a_kept_entry_runs_on_each_calls_own_pointers_in_order():
    a, b, c = T((8, 8), ptr=0x100), T((8, 8), ptr=0x200), T((8, 8), 'float32', ptr=0x300)
    entry = Entry()
    table = {(('f', 1), key(a, b, None, c)): entry}
    assert _C.run_kept(table, ('f', 1), a, b, None, c) is True
    assert _C.run_kept(table, ('f', 1), T((8, 8), ptr=0x400), b, None, c) is True
    assert [p for _, p in entry.calls] == [(0x100, 0x200, 0, 0x300), (0x400, 0x200, 0, 0x300)]
    assert _C.run_kept(table, ('f', 2), a, b, None, c) is False  # another prefix: another signature
    assert _C.run_kept(table, ('f', 1), a, b, c, None) is False
    assert len(entry.calls) == 2


def test_a_declining_entry_and_an_unhashable_prefix_send_the_call_to_its_checks():
    a = T((8, 8))
    assert _C.run_kept({(('f', ), key(a)): Entry(result=False)}, ('f', ), a) is False
    assert _C.run_kept({}, (['unhashable'], ), a) is False


def test_errors_of_the_run_itself_propagate():
    a = T((8, 8))
    table = {(('f', ), key(a)): Entry(error=RuntimeError('no GPU'))}
    with pytest.raises(RuntimeError, match='no GPU'):
        _C.run_kept(table, ('f', ), a)


def test_the_num_sms_setting_is_what_kept_runs_see():
    a = T((8, 8))
    entry = Entry()
    table = {(('f', ), key(a)): entry}
    _C.set_num_sms_setting(66)
    try:
        _C.run_kept(table, ('f', ), a)
    finally:
        _C.set_num_sms_setting(0)
    _C.run_kept(table, ('f', ), a)
    assert [n for n, _ in entry.calls] == [66, 0]


@pytest.mark.skipif(torch is None, reason='torch is not installed: its tensors are read through its C accessors')
def test_torch_tensors_are_read_as_their_stand_ins():
    x = torch.empty(16, 32, dtype=torch.bfloat16)
    stand_in = T((16, 32), 'bfloat16', device='cpu', ptr=x.data_ptr())
    assert key(x) == key(stand_in)
    assert key(x.t()) != key(x) and key(x.t()) == key(T((32, 16), 'bfloat16', device='cpu', strides=(1, 32)))
    assert key(x.float()) != key(x)
    entry = Entry()
    assert _C.run_kept({(('f', ), key(x)): entry}, ('f', ), x) is True
    assert entry.calls == [(0, (x.data_ptr(), ))]


def test_torch_tensors_skip_the_stand_in_geometry_checks(monkeypatch):
    # torch's own tensors always have integer sizes, non-negative strides and a valid pointer: checking them
    # cost about 4 µs a tensor on every first call and every scale-layout helper call. Stand-ins are still checked.
    from deep_gemm import _checks

    def checked(t, name):
        raise AssertionError(f'{name} was checked')

    monkeypatch.setattr(_checks, '_require_geometry', checked)
    with pytest.raises(AssertionError, match='x was checked'):
        _checks.require_tensor(T((4, 4)), 'x')
    if torch is not None:
        t = torch.empty(4, 4)
        assert _checks.require_tensor(t, 'x') is t
        assert _checks.require_tensor(torch.nn.Parameter(t), 'p') is not None

        class Sub(torch.Tensor):
            pass

        with pytest.raises(AssertionError, match='s was checked'):
            _checks.require_tensor(t.as_subclass(Sub), 's')
