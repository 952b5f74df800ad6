// deep_gemm._C's per-call fast path. A GEMM call on an argument signature the package has seen costs one call into
// here: run_kept(table, prefix, *tensors) reads each tensor's shape, strides, dtype, device and data pointer through
// the CPython API (the attributes _tensor.py reads, so no libtorch), finds the plan deep_gemm/_plans.py keeps under
// (prefix, signature) and runs it on torch's current stream. tensors_key(*tensors) is that signature, for the slow
// path to keep the plan under. torch's accessors are most of the cost either way; reading them from C saves the
// interpreter's share, about a quarter of the Python side of a cached FP8 call on a 2-core CPU.
#include <nanobind/nanobind.h>

#include <Python.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "_plan.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using deep_gemm_ext::PyPlan;
using tilegemm::api::LaunchPlan;

// The SM limit the plans run with (deep_gemm.set_num_sms; 0: every SM), read by every call.
std::atomic<int> g_num_sms{0};
// deep_gemm._tensor.current_stream: device index -> torch's current stream on it, as an int. Never released (nor is
// anything else held here): a reference dropped at static destruction would reach a finalised interpreter.
PyObject* g_stream_source = nullptr;

PyObject* intern(const char* name) {
  return PyUnicode_InternFromString(name);
}

struct Names {
  PyObject* shape = intern("shape");
  PyObject* stride = intern("stride");
  PyObject* dtype = intern("dtype");
  PyObject* get_device = intern("get_device");
  PyObject* device = intern("device");
  PyObject* type = intern("type");
  PyObject* index = intern("index");
  PyObject* data_ptr = intern("data_ptr");
};

const Names& names() {
  static const Names n;
  return n;
}

// How to read one type's tensors. For torch.Tensor (and subclasses that keep its accessors) they are C descriptors
// found once on the type and called directly, skipping the attribute lookup on every call (about 50 ns a tensor). Any
// other type (the tests' stand-ins) is read through the generic attribute protocol.
struct Readers {
  getter shape = nullptr, dtype = nullptr;  // the getset descriptors' C getters
  void* shape_closure = nullptr;
  void* dtype_closure = nullptr;
  PyObject* stride = nullptr;  // method descriptors, called with the tensor as first argument
  PyObject* get_device = nullptr;
  PyObject* data_ptr = nullptr;
  bool direct = false;
};

const Readers& readers_of(PyTypeObject* type) {
  constexpr std::size_t kMaxTypes = 16;  // reserved: a returned reference stays valid as more types are added
  static auto* const known = [] {
    auto* types = new std::vector<std::pair<PyTypeObject*, Readers>>;
    types->reserve(kMaxTypes);
    return types;
  }();
  for (const auto& [t, r] : *known)
    if (t == type) return r;
  const Names& n = names();
  Readers r;
  PyObject* shape = _PyType_Lookup(type, n.shape);  // borrowed, owned by the type
  PyObject* dtype = _PyType_Lookup(type, n.dtype);
  PyObject* stride = _PyType_Lookup(type, n.stride);
  PyObject* get_device = _PyType_Lookup(type, n.get_device);
  PyObject* data_ptr = _PyType_Lookup(type, n.data_ptr);
  auto is_getset = [](PyObject* d) { return d != nullptr && Py_IS_TYPE(d, &PyGetSetDescr_Type); };
  auto is_method = [](PyObject* d) { return d != nullptr && Py_IS_TYPE(d, &PyMethodDescr_Type); };
  if (is_getset(shape) && is_getset(dtype) && is_method(stride) && is_method(get_device) && is_method(data_ptr)) {
    const auto* shape_set = reinterpret_cast<PyGetSetDescrObject*>(shape)->d_getset;
    const auto* dtype_set = reinterpret_cast<PyGetSetDescrObject*>(dtype)->d_getset;
    r = {shape_set->get, dtype_set->get, shape_set->closure, dtype_set->closure,
         stride,         get_device,     data_ptr,           shape_set->get != nullptr && dtype_set->get != nullptr};
  }
  if (known->size() < kMaxTypes) {
    // The type and its descriptors are held (never released): the getters stay valid even if the type's
    // attributes are replaced later.
    Py_INCREF(type);
    for (PyObject* d : {shape, dtype, stride, get_device, data_ptr}) Py_XINCREF(d);
    known->emplace_back(type, r);
    return known->back().second;
  }
  static const Readers generic;
  return generic;
}

// A signature: per tensor -1 when it is absent (None), else its rank, sizes, rank again, strides, dtype code and
// device index; plus each tensor's data pointer (not part of the signature) and the first tensor's device.
struct Signature {
  static constexpr int kMaxValues = LaunchPlan::kMaxTensors * 12;
  std::int64_t values[kMaxValues];
  int size = 0;
  std::uintptr_t pointers[LaunchPlan::kMaxTensors] = {};
  int device = -1;

  bool push(std::int64_t v) {
    if (size == kMaxValues) return false;
    values[size++] = v;
    return true;
  }
};

// A dtype's code in a signature: the index of its name (str(dtype), what _tensor.py recognises dtypes by) among the
// names seen so far. torch's dtypes are singletons, so the first 64 objects are remembered by identity (and held, so
// that their addresses are not reused), sparing the str() on every call.
bool dtype_code(PyObject* dtype, std::int64_t& code) {
  static auto& known = *new std::vector<std::pair<nb::object, std::int64_t>>;
  static auto& names = *new std::vector<std::string>;
  for (const auto& [object, c] : known)
    if (object.ptr() == dtype) return code = c, true;
  nb::object text = nb::steal(PyObject_Str(dtype));
  const char* name = text.is_valid() ? PyUnicode_AsUTF8(text.ptr()) : nullptr;
  if (name == nullptr) return false;
  std::size_t i = 0;
  while (i < names.size() && names[i] != name) ++i;
  if (i == names.size()) {
    if (names.size() >= 256) return false;  // not torch's dtypes: such calls keep no plan
    names.emplace_back(name);
  }
  code = static_cast<std::int64_t>(i);
  if (known.size() < 64) known.emplace_back(nb::borrow(dtype), code);
  return true;
}

// Pushes the length of `seq` (a tuple, torch.Size, or any sequence) and its items, which must be ints.
bool push_ints(PyObject* seq, Signature& s) {
  nb::object fast = nb::steal(PyTuple_Check(seq) ? (Py_INCREF(seq), seq) : PySequence_Fast(seq, ""));
  if (!fast.is_valid()) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
  if (!s.push(n)) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!PyLong_Check(items[i]) || PyBool_Check(items[i])) return false;
    const long long v = PyLong_AsLongLong(items[i]);
    if ((v == -1 && PyErr_Occurred()) || !s.push(v)) return false;
  }
  return true;
}

// `method` (a method descriptor) called on t, or t's method called `name`.
PyObject* call_method(PyObject* t, const Readers& r, PyObject* method, PyObject* name) {
  return r.direct ? PyObject_Vectorcall(method, &t, 1, nullptr) : PyObject_CallMethodNoArgs(t, name);
}

// t.get_device(), or for objects without it the index of a 'cuda' `device` (0 when it has none), else -1.
bool read_device(PyObject* t, const Readers& r, std::int64_t& device) {
  const Names& n = names();
  nb::object index = nb::steal(call_method(t, r, r.get_device, n.get_device));
  if (!index.is_valid()) {
    if (r.direct || !PyErr_ExceptionMatches(PyExc_AttributeError)) return false;
    PyErr_Clear();
    nb::object dev = nb::steal(PyObject_GetAttr(t, n.device));
    if (!dev.is_valid()) return false;
    nb::object type = nb::steal(PyObject_GetAttr(dev.ptr(), n.type));
    if (!type.is_valid()) return false;
    const int cuda = PyUnicode_Check(type.ptr()) && PyUnicode_CompareWithASCIIString(type.ptr(), "cuda") == 0;
    if (!cuda) return device = -1, true;
    index = nb::steal(PyObject_GetAttr(dev.ptr(), n.index));
    if (!index.is_valid()) return false;
    if (index.is_none()) return device = 0, true;
  }
  if (!PyLong_Check(index.ptr()) || PyBool_Check(index.ptr())) return false;
  device = PyLong_AsLongLong(index.ptr());
  return !(device == -1 && PyErr_Occurred());
}

// Adds tensor `i` (None: absent) to the signature. False, with no Python error left set, when `t` cannot be read as
// a tensor: the call then takes the checked path, which names what is wrong.
bool read_tensor(PyObject* t, int i, Signature& s) {
  if (t == Py_None) return s.push(-1);
  const Names& n = names();
  const Readers& r = readers_of(Py_TYPE(t));
  nb::object shape = nb::steal(r.direct ? r.shape(t, r.shape_closure) : PyObject_GetAttr(t, n.shape));
  if (!shape.is_valid() || !push_ints(shape.ptr(), s)) return false;
  nb::object strides = nb::steal(call_method(t, r, r.stride, n.stride));
  if (!strides.is_valid() || !push_ints(strides.ptr(), s)) return false;
  nb::object dtype = nb::steal(r.direct ? r.dtype(t, r.dtype_closure) : PyObject_GetAttr(t, n.dtype));
  std::int64_t code = 0, device = 0;
  if (!dtype.is_valid() || !dtype_code(dtype.ptr(), code) || !s.push(code)) return false;
  if (!read_device(t, r, device) || !s.push(device)) return false;
  nb::object pointer = nb::steal(call_method(t, r, r.data_ptr, n.data_ptr));
  if (!pointer.is_valid() || !PyLong_Check(pointer.ptr())) return false;
  const unsigned long long address = PyLong_AsUnsignedLongLong(pointer.ptr());
  if (address == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return false;
  s.pointers[i] = static_cast<std::uintptr_t>(address);
  if (s.device < 0 && i == 0) s.device = static_cast<int>(device);
  return true;
}

bool read_signature(const nb::args& tensors, Signature& s) {
  if (tensors.size() == 0 || tensors.size() > LaunchPlan::kMaxTensors) return false;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (!read_tensor(tensors[i].ptr(), static_cast<int>(i), s)) {
      PyErr_Clear();
      return false;
    }
  }
  return true;
}

nb::object signature_bytes(const Signature& s) {
  nb::object bytes = nb::steal(PyBytes_FromStringAndSize(reinterpret_cast<const char*>(s.values),
                                                         static_cast<Py_ssize_t>(s.size * sizeof(std::int64_t))));
  if (!bytes.is_valid()) throw nb::python_error();
  return bytes;
}

// True when a kept plan ran; false when there is none for this call (or the tensors cannot be read, or the plan turns
// the pointers down): the caller then checks its arguments. Errors of the run itself (no GPU, a launch) propagate.
bool run_kept(nb::handle table, nb::handle prefix, const nb::args& tensors) {
  Signature s;
  if (!PyDict_Check(table.ptr()) || !read_signature(tensors, s)) return false;
  nb::object key = nb::make_tuple(prefix, signature_bytes(s));  // the key _plans.py keeps plans under
  PyObject* found = PyDict_GetItemWithError(table.ptr(), key.ptr());
  if (found == nullptr) {
    PyErr_Clear();  // not kept, or a prefix that cannot be hashed: the checks name it
    return false;
  }
  nb::object entry = nb::borrow(found);  // held: the run releases the GIL, and another thread may drop it from table
  if (g_stream_source == nullptr) throw nb::type_error("deep_gemm._C: no stream source was set");
  const auto stream = nb::cast<std::uintptr_t>(nb::handle(g_stream_source)(s.device < 0 ? 0 : s.device));
  const int num_sms = g_num_sms.load(std::memory_order_relaxed);
  PyPlan* plan = nullptr;
  if (nb::try_cast<PyPlan*>(entry, plan) && plan != nullptr) return plan->run(stream, num_sms, s.pointers, true);
  // Anything else kept there (deep_gemm.bench's recorder of runs) runs through its own launch method.
  nb::list args;
  for (std::size_t i = 0; i < tensors.size(); ++i) args.append(s.pointers[i]);
  return nb::cast<bool>(entry.attr("launch")(stream, num_sms, *args));
}

}  // namespace

void register_kept_bindings(nb::module_& m) {
  m.def("run_kept", &run_kept, "table"_a, "prefix"_a, "tensors"_a,
        "Runs the plan kept in `table` under (prefix, tensors_key(*tensors)) on the tensors' pointers: True when one "
        "ran");
  m.def(
      "tensors_key",
      [](const nb::args& tensors) -> nb::object {
        Signature s;
        return read_signature(tensors, s) ? signature_bytes(s) : nb::none();
      },
      "tensors"_a, "The signature of the tensors (None allowed) as bytes; None when one cannot be read as a tensor");
  m.def(
      "set_stream_source",
      [](nb::handle source) {
        Py_XDECREF(g_stream_source);
        g_stream_source = source.inc_ref().ptr();
      },
      "source"_a);
  m.def(
      "set_num_sms_setting", [](int num_sms) { g_num_sms.store(num_sms, std::memory_order_relaxed); }, "num_sms"_a);
  m.def("num_sms_setting", [] { return g_num_sms.load(std::memory_order_relaxed); });
}
