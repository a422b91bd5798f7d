// SoftMargin for PyTorch: the operators' CUDA kernels, enqueued on torch's current stream.
//
// Each (device, stream) gets one Kokkos::Cuda instance that wraps torch's stream, made on first use and cached until
// Kokkos is finalized: making one allocates (Kokkos' scratch), and so does the library on an instance's first call
// of a kind (its per-instance workspace, a kernel's occupancy query), which a graph capture in CUDA's default mode
// forbids. So a call on a stream that is being captured into a CUDA graph runs with the thread's capture mode relaxed
// (cudaThreadExchangeStreamCaptureMode): no warm-up on the capture stream is needed, and what the call enqueues is
// captured as usual. Outside captures a call costs one capture-status query more.
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/OpMathType.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <impl/SoftMargin_InstanceCache.hpp>
#include <map>
#include <mutex>
#include <utility>

#include "SoftMarginTorch_Args.hpp"
#include "SoftMarginTorch_Kernels.hpp"
#include "SoftMarginTorch_Ops.hpp"
#include "SoftMarginTorch_Runtime.hpp"

namespace softmargin::torch_ops {
namespace {

/// The Kokkos::Cuda instance of each (device, stream), made on first use and released at Kokkos::finalize.
using Instances = softmargin::Impl::Cache<std::pair<int, cudaStream_t>, Kokkos::Cuda>;

/// Each thread's last (device, stream) and its instance in the cache: a stream of calls on one stream finds its
/// instance without the cache's lock while the cache's generation is the one it was found in (an empty entry's 0
/// never is).
struct LastInstance {
  std::uint64_t generation = 0;
  int device = -1;
  cudaStream_t stream = nullptr;
  const Kokkos::Cuda* space = nullptr;
};
thread_local LastInstance last;

/// The cached instance of (device, stream), made on first use.
const Kokkos::Cuda& find_or_make(int device, cudaStream_t stream) {
  const std::uint64_t generation = Instances::generation();
  const Kokkos::Cuda* space = Instances::find_or_make({device, stream}, stream).get();
  last = {generation, device, stream, space};
  return *space;
}

/// The Kokkos::Cuda instance on torch's current stream of one device, for the length of one operator call (and the
/// relaxed capture mode, if that stream is capturing).
class StreamSpace {
 public:
  explicit StreamSpace(const at::Device& device) {
    const int index = device.index();
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(index).stream();
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    TORCH_CHECK(status != cudaStreamCaptureStatusActive || kokkos_ready(),
                "softmargin: the process's first SoftMargin call is being captured into a CUDA graph, and Kokkos "
                "cannot be initialized during a capture: make one call before capturing (a warm-up)");
    ensure_kokkos();
    if (status == cudaStreamCaptureStatusActive) {
      mode_ = cudaStreamCaptureModeRelaxed;
      C10_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode_));
      relaxed_ = true;
    }
    if (last.stream == stream && last.device == index && last.generation == Instances::generation()) {
      space_ = last.space;
      return;
    }
    try {
      space_ = &find_or_make(index, stream);
    } catch (...) {
      restore();
      throw;
    }
  }
  ~StreamSpace() { restore(); }
  StreamSpace(const StreamSpace&) = delete;
  StreamSpace& operator=(const StreamSpace&) = delete;

  const Kokkos::Cuda& space() const { return *space_; }

 private:
  void restore() {
    if (relaxed_) cudaThreadExchangeStreamCaptureMode(&mode_);
    relaxed_ = false;
  }

  const Kokkos::Cuda* space_ = nullptr;
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeGlobal;
  bool relaxed_ = false;
};

constexpr auto kCUDA = c10::DeviceType::CUDA;
constexpr OpNames kSoftMargin = op_names(Loss::SoftMargin);
constexpr OpNames kBCE = op_names(Loss::BCEWithLogits);
constexpr OpNames kPairwise = op_names(Loss::Pairwise);

/// Runs f(space) on torch's current stream of the call's device.
template <class F>
auto on_stream(const LossArgs& args, F&& f) {
  const c10::cuda::CUDAGuard guard(args.x.device());
  const StreamSpace s(args.x.device());
  return f(s.space());
}

at::Tensor loss_cuda(const at::Tensor& input, const at::Tensor& target, std::int64_t reduction, const OptTensor& weight,
                     const OptTensor& normalizer) {
  const auto args = check_args(kSoftMargin.loss, input, target, weight, normalizer, reduction, kCUDA);
  return on_stream(args, [&](const auto& space) { return Kernels<Kokkos::Cuda, Loss::SoftMargin>::loss(space, args); });
}

at::Tensor backward_cuda(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& target,
                         std::int64_t reduction, const OptTensor& weight, const OptTensor& normalizer) {
  const auto args = check_args(kSoftMargin.backward, input, target, weight, normalizer, reduction, kCUDA);
  const auto g = check_upstream(kSoftMargin.backward, grad_output, args);
  return on_stream(
      args, [&](const auto& space) { return Kernels<Kokkos::Cuda, Loss::SoftMargin>::backward(space, g, args); });
}

std::tuple<at::Tensor, at::Tensor> loss_and_grad_cuda(const at::Tensor& input, const at::Tensor& target,
                                                      std::int64_t reduction, const OptTensor& weight,
                                                      const OptTensor& normalizer) {
  const auto args = check_args(kSoftMargin.loss_and_grad, input, target, weight, normalizer, reduction, kCUDA);
  return on_stream(
      args, [&](const auto& space) { return Kernels<Kokkos::Cuda, Loss::SoftMargin>::loss_and_grad(space, args); });
}

at::Tensor bce_cuda(const at::Tensor& input, const at::Tensor& target, const OptTensor& weight,
                    const OptTensor& pos_weight, std::int64_t reduction, const OptTensor& normalizer) {
  const auto args = check_bce_args(kBCE.loss, input, target, weight, pos_weight, normalizer, reduction, kCUDA);
  return on_stream(args,
                   [&](const auto& space) { return Kernels<Kokkos::Cuda, Loss::BCEWithLogits>::loss(space, args); });
}

at::Tensor bce_backward_cuda(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& target,
                             const OptTensor& weight, const OptTensor& pos_weight, std::int64_t reduction,
                             const OptTensor& normalizer) {
  const auto args = check_bce_args(kBCE.backward, input, target, weight, pos_weight, normalizer, reduction, kCUDA);
  const auto g = check_upstream(kBCE.backward, grad_output, args);
  return on_stream(
      args, [&](const auto& space) { return Kernels<Kokkos::Cuda, Loss::BCEWithLogits>::backward(space, g, args); });
}

std::tuple<at::Tensor, at::Tensor> bce_loss_and_grad_cuda(const at::Tensor& input, const at::Tensor& target,
                                                          const OptTensor& weight, const OptTensor& pos_weight,
                                                          std::int64_t reduction, const OptTensor& normalizer) {
  const auto args = check_bce_args(kBCE.loss_and_grad, input, target, weight, pos_weight, normalizer, reduction, kCUDA);
  return on_stream(
      args, [&](const auto& space) { return Kernels<Kokkos::Cuda, Loss::BCEWithLogits>::loss_and_grad(space, args); });
}

at::Tensor pairwise_cuda(const at::Tensor& chosen, const at::Tensor& rejected, const OptTensor& margin,
                         double margin_value, std::int64_t reduction, const OptTensor& normalizer) {
  const auto args =
      check_pairwise_args(kPairwise.loss, chosen, rejected, margin, margin_value, normalizer, reduction, kCUDA);
  return on_stream(args, [&](const auto& space) { return Kernels<Kokkos::Cuda, Loss::Pairwise>::loss(space, args); });
}

std::tuple<at::Tensor, at::Tensor> pairwise_backward_cuda(const at::Tensor& grad_output, const at::Tensor& chosen,
                                                          const at::Tensor& rejected, const OptTensor& margin,
                                                          double margin_value, std::int64_t reduction,
                                                          const OptTensor& normalizer) {
  const auto args =
      check_pairwise_args(kPairwise.backward, chosen, rejected, margin, margin_value, normalizer, reduction, kCUDA);
  const auto g = check_upstream(kPairwise.backward, grad_output, args);
  return on_stream(args,
                   [&](const auto& space) { return Kernels<Kokkos::Cuda, Loss::Pairwise>::backward(space, g, args); });
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> pairwise_loss_and_grad_cuda(const at::Tensor& chosen,
                                                                           const at::Tensor& rejected,
                                                                           const OptTensor& margin, double margin_value,
                                                                           std::int64_t reduction,
                                                                           const OptTensor& normalizer) {
  const auto args = check_pairwise_args(kPairwise.loss_and_grad, chosen, rejected, margin, margin_value, normalizer,
                                        reduction, kCUDA);
  return on_stream(
      args, [&](const auto& space) { return Kernels<Kokkos::Cuda, Loss::Pairwise>::loss_and_grad(space, args); });
}

/// grad[i] *= *g for every element (16-bit types multiplied in float), unless *g == 1: then every thread returns
/// after one load of g (the backward of loss.backward(), whose upstream gradient is the engine's 1, costs a launch and
/// no memory traffic).
template <class T>
__global__ void scale_unless_one_kernel(T* grad, const T* g, const std::int64_t n) {
  using Compute = at::opmath_type<T>;
  const Compute s = static_cast<Compute>(*g);
  if (s == Compute(1)) return;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    grad[i] = static_cast<T>(static_cast<Compute>(grad[i]) * s);
}

/// Multiprocessors of a device (queried once per device).
int multiprocessors(int device) {
  static std::mutex mutex;
  static std::map<int, int> count;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = count.find(device);
  if (it == count.end()) {
    int sms = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    it = count.emplace(device, sms).first;
  }
  return it->second;
}

}  // namespace

at::Tensor empty_cuda(c10::IntArrayRef sizes, c10::ScalarType dtype) {
  return at::Tensor(at::detail::empty_generic(sizes, c10::cuda::CUDACachingAllocator::get(),
                                              c10::DispatchKeySet(c10::DispatchKey::CUDA), dtype, {}));
}

void scale_unless_one_cuda(at::Tensor& grad, const at::Tensor& g) {
  TORCH_INTERNAL_ASSERT(grad.is_non_overlapping_and_dense() && g.numel() == 1 && g.device() == grad.device() &&
                        g.scalar_type() == grad.scalar_type());
  const std::int64_t n = grad.numel();
  if (n == 0) return;
  const c10::cuda::CUDAGuard guard(grad.device());
  constexpr int kBlock = 256;
  const std::int64_t blocks = std::min<std::int64_t>((n + kBlock - 1) / kBlock, 4 * multiprocessors(grad.get_device()));
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(grad.get_device()).stream();
  SOFTMARGIN_DISPATCH_TYPES(grad.scalar_type(), "softmargin::scale_unless_one", [&] {
    scale_unless_one_kernel<scalar_t>
        <<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(grad.data_ptr<scalar_t>(), g.data_ptr<scalar_t>(), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace softmargin::torch_ops

TORCH_LIBRARY_IMPL(softmargin, CUDA, m) {
  m.impl("loss", &softmargin::torch_ops::loss_cuda);
  m.impl("backward", &softmargin::torch_ops::backward_cuda);
  m.impl("loss_and_grad", &softmargin::torch_ops::loss_and_grad_cuda);
  m.impl("bce_with_logits", &softmargin::torch_ops::bce_cuda);
  m.impl("bce_with_logits_backward", &softmargin::torch_ops::bce_backward_cuda);
  m.impl("bce_with_logits_loss_and_grad", &softmargin::torch_ops::bce_loss_and_grad_cuda);
  m.impl("pairwise_logistic", &softmargin::torch_ops::pairwise_cuda);
  m.impl("pairwise_logistic_backward", &softmargin::torch_ops::pairwise_backward_cuda);
  m.impl("pairwise_logistic_loss_and_grad", &softmargin::torch_ops::pairwise_loss_and_grad_cuda);
}
