// SoftMargin CUDA room: how a native kernel is launched: its grid (one wave, never more blocks than tiles of work),
// programmatic dependent launch, Kokkos Tools, errors.
#ifndef SOFTMARGIN_IMPL_CUDA_LAUNCH_HPP
#define SOFTMARGIN_IMPL_CUDA_LAUNCH_HPP

#include <cuda_runtime.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "SoftMargin_CudaTuning.hpp"

namespace softmargin::Impl::CudaNative {

/// Threads a block of every native kernel.
constexpr int kBlock = CudaTuning::block_size;

/// One wave of `per_sm` blocks per multiprocessor (fewer if fewer are resident), never more blocks than there are
/// block-sized tiles of `work` items (packs or elements).
template <auto Kernel>
unsigned grid_for(const Kokkos::Cuda& space, std::size_t work, int per_sm) {
  static const int resident = [] {  // queried once per kernel
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, kBlock, 0) != cudaSuccess || b < 1) b = 1;
    return b;
  }();
  const std::size_t sms = static_cast<std::size_t>(space.cuda_device_prop().multiProcessorCount);
  std::size_t grid = sms * static_cast<std::size_t>(std::min(per_sm, resident));
  grid = std::min(grid, (work + kBlock - 1) / kBlock);
  return static_cast<unsigned>(std::max<std::size_t>(grid, 1));
}

/// kernel<<<grid, kBlock, 0, space's stream>>>(args...) on space's device, with programmatic dependent launch where
/// LaunchOptions and the device allow it, reported to Kokkos Tools as a kernel named `label`; throws if the launch
/// fails.
template <class... Params, class... Args>
void launch(const char* label, const Kokkos::Cuda& space, void (*kernel)(Params...), unsigned grid, Args&&... args) {
  std::uint64_t kernel_id = 0;
  const bool tools = Kokkos::Tools::profileLibraryLoaded();
  if (tools) Kokkos::Tools::beginParallelFor(label, Kokkos::Tools::Experimental::device_id(space), &kernel_id);
  int device = -1;
  cudaGetDevice(&device);
  if (device != space.cuda_device()) cudaSetDevice(space.cuda_device());
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(kBlock);
  config.dynamicSmemBytes = 0;
  config.stream = space.cuda_stream();
  config.attrs = attribute;
  const bool pdl = launch_options().programmatic_dependent_launch && space.cuda_device_prop().major >= 9;
  config.numAttrs = pdl ? 1 : 0;
  cudaError_t err = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (err == cudaSuccess) err = cudaGetLastError();
  if (tools) Kokkos::Tools::endParallelFor(kernel_id);
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(label) + ": CUDA kernel launch failed: " + cudaGetErrorString(err));
}

}  // namespace softmargin::Impl::CudaNative

#endif
