// CUDA peers on the same x and y: cublasSdot (the forward pass's bytes), cublasSaxpy (the gradient passes'), CUB's
// TransformReduce with the library's element-wise loss, and an empty <<<>>> launch (calibration).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cub/device/device_reduce.cuh>
#include <memory>

#include "bench_common.hpp"

namespace bench {

__global__ void empty_cuda_kernel() {}

/// The library's loss of element i (an internal function: the CUB row differs from the library in its reduction
/// only, not in its arithmetic).
struct LossAt {
  const float* x;
  const float* y;
  __host__ __device__ float operator()(std::int64_t i) const { return softmargin::Impl::loss(x[i], y[i]); }
};

void add_cuda_variants() {
  struct Handles {
    cublasHandle_t blas = nullptr;
    Kokkos::View<float, Mem> one{"one"};  // cublasSaxpy's alpha, read on the device
    Kokkos::View<char*, Mem> cub_temp;
    ~Handles() { cublasDestroy(blas); }
  };
  auto h = std::make_shared<Handles>();
  cublasCreate(&h->blas);
  cublasSetStream(h->blas, space().cuda_stream());
  cublasSetPointerMode(h->blas, CUBLAS_POINTER_MODE_DEVICE);
  Kokkos::deep_copy(h->one, 1.0f);
  const unsigned grid = static_cast<unsigned>(std::max(1, space().concurrency() / 256));

  add_variant({"launch/empty_cuda_kernel",
               [grid](const Buffers&, int) { empty_cuda_kernel<<<grid, 256, 0, space().cuda_stream()>>>(); },
               Check::None, 0, PeerKind::None});
  add_variant({"peer/cublasSdot",
               [h](const Buffers& b, int k) {
                 cublasSdot_64(h->blas, b.shape.size(), b.x[k].data(), 1, b.y[k].data(), 1, b.result.data());
               },
               Check::Dot, 8, PeerKind::Dot, 1e-4});
  add_variant({"peer/cublasSaxpy",  // grad += x
               [h](const Buffers& b, int k) {
                 cublasSaxpy_64(h->blas, b.shape.size(), h->one.data(), b.x[k].data(), 1, b.grad[k].data(), 1);
               },
               Check::Axpy, 12, PeerKind::Axpy});
  add_variant({"peer/CUB_TransformReduce",  // the sum of the losses, accumulated in float
               [h](const Buffers& b, int k) {
                 const thrust::counting_iterator<std::int64_t> idx(0);
                 const LossAt loss{b.x[k].data(), b.y[k].data()};
                 std::size_t bytes = 0;
                 cub::DeviceReduce::TransformReduce(nullptr, bytes, idx, b.result.data(), b.shape.size(),
                                                    cuda::std::plus<float>{}, loss, 0.0f, space().cuda_stream());
                 if (h->cub_temp.size() < bytes) {  // grown on the untimed first call of a size (its check)
                   h->cub_temp = Kokkos::View<char*, Mem>();
                   h->cub_temp = Kokkos::View<char*, Mem>("cub_temp", bytes);
                 }
                 cub::DeviceReduce::TransformReduce(h->cub_temp.data(), bytes, idx, b.result.data(), b.shape.size(),
                                                    cuda::std::plus<float>{}, loss, 0.0f, space().cuda_stream());
               },
               Check::Sum, 8, PeerKind::Dot, 1e-4});
}

}  // namespace bench
