// SoftMargin for PyTorch: softmargin._entry, a lean Python entry to the operator softmargin::loss.
//
// loss(input, target, reduction) calls the operator through the dispatcher, as torch.ops.softmargin.loss.default
// does (autograd, every dispatch key and the kernels are the same), without the per-call work of torch.ops' generic
// path (schema matching of Python arguments, boxing into a stack of IValues). Any other call takes that path (the
// fallback, set once by the package): anything but two plain tensors and an int as positional arguments, or where
// __torch_function__ applies (a tensor subclass that overrides it, or an active TorchFunctionMode), so every caller
// sees torch.ops' behaviour.
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/disable_torch_function.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/version.h>

#include <cstdint>

namespace {

PyObject* fallback = nullptr;  ///< torch.ops.softmargin.loss.default (a strong reference, kept for the process)

using Optional = c10::optional<at::Tensor>;
using LossSignature = at::Tensor(const at::Tensor&, const at::Tensor&, std::int64_t, const Optional&, const Optional&);

const c10::TypedOperatorHandle<LossSignature>& loss_op() {
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("softmargin::loss", "").typed<LossSignature>();
  return op;
}

/// Whether __torch_function__ may apply to a call with plain tensors (torch.Tensor itself, whose __torch_function__
/// is the default): only through a TorchFunctionMode. torch 2's libtorch_python does not export
/// check_has_torch_function, so there the mode stack of ATen (exported) is read; torch 1 asks the tensors.
bool torch_function_applies(PyObject* a, PyObject* b) {
#if TORCH_VERSION_MAJOR >= 2
  (void)a;
  (void)b;
  return at::impl::PythonTorchFunctionTLS::stack_len() > 0;
#else
  return torch::check_has_torch_function(a) || torch::check_has_torch_function(b);
#endif
}

PyObject* loss(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  HANDLE_TH_ERRORS
  const bool plain = nargs == 3 && kwnames == nullptr && THPVariable_CheckExact(args[0]) &&
                     THPVariable_CheckExact(args[1]) && PyLong_CheckExact(args[2]) &&
                     !torch_function_applies(args[0], args[1]);
  if (!plain) {
    TORCH_CHECK(fallback != nullptr, "softmargin._entry: set_fallback has not been called");
    return PyObject_Vectorcall(fallback, args, static_cast<std::size_t>(nargs), kwnames);
  }
  const long long reduction = PyLong_AsLongLong(args[2]);
  if (reduction == -1 && PyErr_Occurred()) return nullptr;
  at::Tensor out;
  {
    pybind11::gil_scoped_release no_gil;  // as torch.ops releases it while an operator runs
    out =
        loss_op().call(THPVariable_Unpack(args[0]), THPVariable_Unpack(args[1]), reduction, c10::nullopt, c10::nullopt);
  }
  return THPVariable_Wrap(std::move(out));
  END_HANDLE_TH_ERRORS
}

PyObject* set_fallback(PyObject*, PyObject* op) {
  Py_INCREF(op);
  Py_XDECREF(fallback);
  fallback = op;
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"loss", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&loss)), METH_FASTCALL | METH_KEYWORDS,
     "loss(input, target, reduction): torch.ops.softmargin.loss.default(input, target, reduction)"},
    {"set_fallback", &set_fallback, METH_O, "set_fallback(op): the operator that takes any other call"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_entry", "A lean Python entry to softmargin::loss.", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__entry() { return PyModule_Create(&module); }
