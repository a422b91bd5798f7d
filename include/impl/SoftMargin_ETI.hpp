// SoftMargin: the instantiations compiled once into the library (src/SoftMargin_ETI_*.cpp), included at the end of
// SoftMargin_Dispatch.hpp.
//
// For one backend EXEC and value type T, each macro names the launchers of one pass for every canonical view form:
// flat (contiguous views of any rank, in memory order) and strided of rank 1 and 2. With PREFIX `extern` it declares
// them (user code links them instead of compiling the kernels); with an empty PREFIX, src/ defines them.
#ifndef SOFTMARGIN_IMPL_ETI_HPP
#define SOFTMARGIN_IMPL_ETI_HPP

#include "SoftMargin_Dispatch.hpp"

// Canonical views of backend E in its own memory space: in (const T), out (T), s (rank-0 T) and cs (rank-0 const T).
#define SOFTMARGIN_ETI_IN(E, T, FORM) SOFTMARGIN_ETI_VIEW_##FORM(E, const T)
#define SOFTMARGIN_ETI_OUT(E, T, FORM) SOFTMARGIN_ETI_VIEW_##FORM(E, T)
#define SOFTMARGIN_ETI_VIEW_FLAT(E, T) softmargin::Impl::FlatView<T, E>
#define SOFTMARGIN_ETI_VIEW_STRIDED1(E, T) softmargin::Impl::StridedView<T, 1, E>
#define SOFTMARGIN_ETI_VIEW_STRIDED2(E, T) softmargin::Impl::StridedView<T, 2, E>
#define SOFTMARGIN_ETI_SCALAR(E, T, MEM) softmargin::Impl::ScalarView<T, E, MEM>

/// Forward, reduced into a result in MEM.
#define SOFTMARGIN_ETI_LOSS_FORM(PREFIX, E, T, FORM, MEM)                                        \
  PREFIX template struct softmargin::Impl::Reduce<                                               \
      E, softmargin::Impl::LossOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, T, FORM)>, \
      SOFTMARGIN_ETI_SCALAR(E, T, MEM)>;
/// Forward, reduction none.
#define SOFTMARGIN_ETI_LOSS_NONE_FORM(PREFIX, E, T, FORM)                                           \
  PREFIX template struct softmargin::Impl::Map<                                                     \
      E, softmargin::Impl::LossNoneOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, T, FORM), \
                                      SOFTMARGIN_ETI_OUT(E, T, FORM)>>;
/// Backward with a scalar upstream gradient (sum, mean) and with one per element (none).
#define SOFTMARGIN_ETI_BACKWARD_FORM(PREFIX, E, T, FORM)                                                             \
  PREFIX template struct softmargin::Impl::Map<                                                                      \
      E,                                                                                                             \
      softmargin::Impl::GradOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, T, FORM),                         \
                               SOFTMARGIN_ETI_OUT(E, T, FORM), SOFTMARGIN_ETI_SCALAR(E, const T, E::memory_space)>>; \
  PREFIX template struct softmargin::Impl::Map<                                                                      \
      E, softmargin::Impl::GradOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, T, FORM),                      \
                                  SOFTMARGIN_ETI_OUT(E, T, FORM), SOFTMARGIN_ETI_IN(E, T, FORM)>>;
/// Fused forward + backward, loss into a result in MEM.
#define SOFTMARGIN_ETI_FUSED_FORM(PREFIX, E, T, FORM, MEM)                                       \
  PREFIX template struct softmargin::Impl::Reduce<                                               \
      E,                                                                                         \
      softmargin::Impl::LossGradOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, T, FORM), \
                                   SOFTMARGIN_ETI_OUT(E, T, FORM),                               \
                                   SOFTMARGIN_ETI_SCALAR(E, const T, E::memory_space)>,          \
      SOFTMARGIN_ETI_SCALAR(E, T, MEM)>;

#define SOFTMARGIN_ETI_EACH_FORM(M, ...) M(__VA_ARGS__, FLAT) M(__VA_ARGS__, STRIDED1) M(__VA_ARGS__, STRIDED2)
#define SOFTMARGIN_ETI_EACH_FORM_MEM(M, PREFIX, E, T, MEM) \
  M(PREFIX, E, T, FLAT, MEM) M(PREFIX, E, T, STRIDED1, MEM) M(PREFIX, E, T, STRIDED2, MEM)

/// Everything of one backend and value type. Results land in the backend's memory space, and for device backends
/// (HOST_RESULT = Kokkos::SharedHostPinnedSpace) also in the host-pinned memory of the blocking overloads.
#define SOFTMARGIN_ETI_FORWARD(PREFIX, E, T, MEM)                           \
  SOFTMARGIN_ETI_EACH_FORM_MEM(SOFTMARGIN_ETI_LOSS_FORM, PREFIX, E, T, MEM) \
  SOFTMARGIN_ETI_EACH_FORM(SOFTMARGIN_ETI_LOSS_NONE_FORM, PREFIX, E, T)
#define SOFTMARGIN_ETI_BACKWARD(PREFIX, E, T) SOFTMARGIN_ETI_EACH_FORM(SOFTMARGIN_ETI_BACKWARD_FORM, PREFIX, E, T)
#define SOFTMARGIN_ETI_FUSED(PREFIX, E, T, MEM) \
  SOFTMARGIN_ETI_EACH_FORM_MEM(SOFTMARGIN_ETI_FUSED_FORM, PREFIX, E, T, MEM)

#define SOFTMARGIN_ETI_HOST_BACKEND(PREFIX, E, T)       \
  SOFTMARGIN_ETI_FORWARD(PREFIX, E, T, E::memory_space) \
  SOFTMARGIN_ETI_BACKWARD(PREFIX, E, T)                 \
  SOFTMARGIN_ETI_FUSED(PREFIX, E, T, E::memory_space)
#define SOFTMARGIN_ETI_DEVICE_BACKEND(PREFIX, E, T)                                                   \
  SOFTMARGIN_ETI_HOST_BACKEND(PREFIX, E, T)                                                           \
  SOFTMARGIN_ETI_EACH_FORM_MEM(SOFTMARGIN_ETI_LOSS_FORM, PREFIX, E, T, Kokkos::SharedHostPinnedSpace) \
  SOFTMARGIN_ETI_EACH_FORM_MEM(SOFTMARGIN_ETI_FUSED_FORM, PREFIX, E, T, Kokkos::SharedHostPinnedSpace)

#if defined(SOFTMARGIN_ENABLE_ETI) && !defined(SOFTMARGIN_ETI_DEFINITION)
#if defined(KOKKOS_ENABLE_SERIAL)
SOFTMARGIN_ETI_HOST_BACKEND(extern, Kokkos::Serial, float)
SOFTMARGIN_ETI_HOST_BACKEND(extern, Kokkos::Serial, double)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
SOFTMARGIN_ETI_HOST_BACKEND(extern, Kokkos::OpenMP, float)
SOFTMARGIN_ETI_HOST_BACKEND(extern, Kokkos::OpenMP, double)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
SOFTMARGIN_ETI_DEVICE_BACKEND(extern, Kokkos::Cuda, float)
SOFTMARGIN_ETI_DEVICE_BACKEND(extern, Kokkos::Cuda, double)
#endif
#endif

#endif
