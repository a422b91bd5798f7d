// SoftMargin for PyTorch: softmargin._entry, a lean Python entry to the operators softmargin::loss,
// softmargin::bce_with_logits and softmargin::pairwise_logistic.
//
// Each function calls its operator through the dispatcher, as torch.ops.softmargin.<name>.default does (autograd,
// every dispatch key and the kernels are the same), without the per-call work of torch.ops' generic path (schema
// matching of Python arguments, boxing into a stack of IValues). Any other call takes that path (the operator's
// fallback, set once by the package): anything but the positional arguments below, each a plain tensor (or None where
// the schema takes an optional one), an int or a float, or where __torch_function__ applies (a tensor subclass that
// overrides it, or an active TorchFunctionMode), so every caller sees torch.ops' behaviour. The normalizer is None
// here: calls with one go through torch.ops.
//   loss(input, target, reduction[, weight])
//   bce_with_logits(input, target, weight, pos_weight, reduction)
//   pairwise_logistic(chosen, rejected, margin, margin_value, reduction)
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/disable_torch_function.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/version.h>

#include <cstdint>
#include <initializer_list>

namespace {

using Optional = c10::optional<at::Tensor>;

enum Entry { kLoss, kBce, kPairwise, kEntries };
PyObject* fallbacks[kEntries] = {};  ///< torch.ops.softmargin.<name>.default (strong references, kept for the process)

template <class Signature>
c10::TypedOperatorHandle<Signature> find_op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").template typed<Signature>();
}

/// Whether __torch_function__ may apply to a call with plain tensors (torch.Tensor itself, whose __torch_function__
/// is the default): only through a TorchFunctionMode. torch 2's libtorch_python does not export
/// check_has_torch_function, so there the mode stack of ATen (exported) is read; torch 1 asks the tensors.
bool torch_function_applies(std::initializer_list<PyObject*> tensors) {
#if TORCH_VERSION_MAJOR >= 2
  (void)tensors;
  return at::impl::PythonTorchFunctionTLS::stack_len() > 0;
#else
  for (PyObject* t : tensors) {
    if (t != Py_None && torch::check_has_torch_function(t)) return true;
  }
  return false;
#endif
}

bool tensor(PyObject* a) { return THPVariable_CheckExact(a); }
bool optional_tensor(PyObject* a) { return a == Py_None || THPVariable_CheckExact(a); }
Optional unpack_optional(PyObject* a) { return a == Py_None ? Optional() : Optional(THPVariable_Unpack(a)); }

PyObject* fall_back(Entry entry, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  TORCH_CHECK(fallbacks[entry] != nullptr, "softmargin._entry: set_fallbacks has not been called");
  return PyObject_Vectorcall(fallbacks[entry], args, static_cast<std::size_t>(nargs), kwnames);
}

/// Runs `call` (the operator) without the GIL, as torch.ops releases it while an operator runs.
template <class Call>
PyObject* run(Call&& call) {
  at::Tensor out;
  {
    pybind11::gil_scoped_release no_gil;
    out = call();
  }
  return THPVariable_Wrap(std::move(out));
}

PyObject* loss(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  HANDLE_TH_ERRORS
  PyObject* weight_arg = nargs == 4 ? args[3] : Py_None;
  if (!((nargs == 3 || nargs == 4) && kwnames == nullptr && tensor(args[0]) && tensor(args[1]) &&
        PyLong_CheckExact(args[2]) && optional_tensor(weight_arg) &&
        !torch_function_applies({args[0], args[1], weight_arg}))) {
    return fall_back(kLoss, args, nargs, kwnames);
  }
  const long long reduction = PyLong_AsLongLong(args[2]);
  if (reduction == -1 && PyErr_Occurred()) return nullptr;
  using Signature = at::Tensor(const at::Tensor&, const at::Tensor&, std::int64_t, const Optional&, const Optional&);
  const at::Tensor& x = THPVariable_Unpack(args[0]);
  const at::Tensor& y = THPVariable_Unpack(args[1]);
  const Optional weight = unpack_optional(weight_arg);
  static const auto op = find_op<Signature>("softmargin::loss");
  return run([&] { return op.call(x, y, reduction, weight, c10::nullopt); });
  END_HANDLE_TH_ERRORS
}

PyObject* bce_with_logits(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  HANDLE_TH_ERRORS
  if (!(nargs == 5 && kwnames == nullptr && tensor(args[0]) && tensor(args[1]) && optional_tensor(args[2]) &&
        optional_tensor(args[3]) && PyLong_CheckExact(args[4]) &&
        !torch_function_applies({args[0], args[1], args[2], args[3]}))) {
    return fall_back(kBce, args, nargs, kwnames);
  }
  const long long reduction = PyLong_AsLongLong(args[4]);
  if (reduction == -1 && PyErr_Occurred()) return nullptr;
  using Signature =
      at::Tensor(const at::Tensor&, const at::Tensor&, const Optional&, const Optional&, std::int64_t, const Optional&);
  const at::Tensor& x = THPVariable_Unpack(args[0]);
  const at::Tensor& t = THPVariable_Unpack(args[1]);
  const Optional weight = unpack_optional(args[2]);
  const Optional pos_weight = unpack_optional(args[3]);
  static const auto op = find_op<Signature>("softmargin::bce_with_logits");
  return run([&] { return op.call(x, t, weight, pos_weight, reduction, c10::nullopt); });
  END_HANDLE_TH_ERRORS
}

PyObject* pairwise_logistic(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  HANDLE_TH_ERRORS
  if (!(nargs == 5 && kwnames == nullptr && tensor(args[0]) && tensor(args[1]) && optional_tensor(args[2]) &&
        PyFloat_CheckExact(args[3]) && PyLong_CheckExact(args[4]) &&
        !torch_function_applies({args[0], args[1], args[2]}))) {
    return fall_back(kPairwise, args, nargs, kwnames);
  }
  const double margin_value = PyFloat_AS_DOUBLE(args[3]);
  const long long reduction = PyLong_AsLongLong(args[4]);
  if (reduction == -1 && PyErr_Occurred()) return nullptr;
  using Signature =
      at::Tensor(const at::Tensor&, const at::Tensor&, const Optional&, double, std::int64_t, const Optional&);
  const at::Tensor& chosen = THPVariable_Unpack(args[0]);
  const at::Tensor& rejected = THPVariable_Unpack(args[1]);
  const Optional margin = unpack_optional(args[2]);
  static const auto op = find_op<Signature>("softmargin::pairwise_logistic");
  return run([&] { return op.call(chosen, rejected, margin, margin_value, reduction, c10::nullopt); });
  END_HANDLE_TH_ERRORS
}

PyObject* set_fallbacks(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != kEntries) {
    PyErr_SetString(PyExc_TypeError, "set_fallbacks(loss, bce_with_logits, pairwise_logistic): three operators");
    return nullptr;
  }
  for (int i = 0; i < kEntries; ++i) {
    Py_INCREF(args[i]);
    Py_XDECREF(fallbacks[i]);
    fallbacks[i] = args[i];
  }
  Py_RETURN_NONE;
}

template <class F>
PyCFunction fastcall(F* f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef methods[] = {
    {"loss", fastcall(&loss), METH_FASTCALL | METH_KEYWORDS,
     "loss(input, target, reduction[, weight]): torch.ops.softmargin.loss.default"},
    {"bce_with_logits", fastcall(&bce_with_logits), METH_FASTCALL | METH_KEYWORDS,
     "bce_with_logits(input, target, weight, pos_weight, reduction): torch.ops.softmargin.bce_with_logits.default"},
    {"pairwise_logistic", fastcall(&pairwise_logistic), METH_FASTCALL | METH_KEYWORDS,
     "pairwise_logistic(chosen, rejected, margin, margin_value, reduction): "
     "torch.ops.softmargin.pairwise_logistic.default"},
    {"set_fallbacks", fastcall(&set_fallbacks), METH_FASTCALL,
     "set_fallbacks(loss, bce_with_logits, pairwise_logistic): the operators that take any other call"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_entry", "A lean Python entry to the softmargin operators.", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__entry() { return PyModule_Create(&module); }
