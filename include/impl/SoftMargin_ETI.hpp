// SoftMargin: the instantiations compiled once into the library (src/SoftMargin_ETI_*.cpp), included at the end of
// SoftMargin_Dispatch.hpp.
//
// For one backend EXEC, x type T and target type Y, each macro names the launchers of one pass for every canonical
// view form: flat (contiguous views of any rank, in memory order) and strided of rank 1 and 2. With PREFIX `extern` it
// declares them (user code links them instead of compiling the kernels); with an empty PREFIX, src/ defines them.
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

/// Forward, reduced into a result of type C in MEM.
#define SOFTMARGIN_ETI_LOSS_FORM(PREFIX, E, T, Y, C, FORM, MEM)                                  \
  PREFIX template struct softmargin::Impl::Reduce<                                               \
      E, softmargin::Impl::LossOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, Y, FORM)>, \
      SOFTMARGIN_ETI_SCALAR(E, C, MEM)>;
/// Forward, reduction none, into x's type.
#define SOFTMARGIN_ETI_LOSS_NONE_FORM(PREFIX, E, T, Y, C, FORM)                                     \
  PREFIX template struct softmargin::Impl::Map<                                                     \
      E, softmargin::Impl::LossNoneOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, Y, FORM), \
                                      SOFTMARGIN_ETI_OUT(E, T, FORM)>>;
/// Backward into x's type, with a scalar upstream gradient (sum, mean: a host value or a rank-0 View of C) and with
/// one per element of x's type (none).
#define SOFTMARGIN_ETI_BACKWARD_FORM(PREFIX, E, T, Y, C, FORM)                                                       \
  PREFIX template struct softmargin::Impl::Map<                                                                      \
      E,                                                                                                             \
      softmargin::Impl::GradOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, Y, FORM),                         \
                               SOFTMARGIN_ETI_OUT(E, T, FORM), SOFTMARGIN_ETI_SCALAR(E, const C, E::memory_space)>>; \
  PREFIX template struct softmargin::Impl::Map<                                                                      \
      E, softmargin::Impl::GradOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, Y, FORM),                      \
                                  SOFTMARGIN_ETI_OUT(E, T, FORM), SOFTMARGIN_ETI_IN(E, T, FORM)>>;
/// Fused forward + backward, gradient in x's type, loss into a result of type C in MEM.
#define SOFTMARGIN_ETI_FUSED_FORM(PREFIX, E, T, Y, C, FORM, MEM)                                 \
  PREFIX template struct softmargin::Impl::Reduce<                                               \
      E,                                                                                         \
      softmargin::Impl::LossGradOp<SOFTMARGIN_ETI_IN(E, T, FORM), SOFTMARGIN_ETI_IN(E, Y, FORM), \
                                   SOFTMARGIN_ETI_OUT(E, T, FORM),                               \
                                   SOFTMARGIN_ETI_SCALAR(E, const C, E::memory_space)>,          \
      SOFTMARGIN_ETI_SCALAR(E, C, MEM)>;

#define SOFTMARGIN_ETI_EACH_FORM(M, ...) M(__VA_ARGS__, FLAT) M(__VA_ARGS__, STRIDED1) M(__VA_ARGS__, STRIDED2)
#define SOFTMARGIN_ETI_EACH_FORM_MEM(M, PREFIX, E, T, Y, C, MEM) \
  M(PREFIX, E, T, Y, C, FLAT, MEM) M(PREFIX, E, T, Y, C, STRIDED1, MEM) M(PREFIX, E, T, Y, C, STRIDED2, MEM)

/// Everything of one backend, x type T, target type Y and compute type C (float for every T but double). Results
/// (of type C) land in the backend's memory space, and for device backends also in the host-pinned memory of the
/// blocking overloads.
#define SOFTMARGIN_ETI_FORWARD(PREFIX, E, T, Y, C, MEM)                           \
  SOFTMARGIN_ETI_EACH_FORM_MEM(SOFTMARGIN_ETI_LOSS_FORM, PREFIX, E, T, Y, C, MEM) \
  SOFTMARGIN_ETI_EACH_FORM(SOFTMARGIN_ETI_LOSS_NONE_FORM, PREFIX, E, T, Y, C)
#define SOFTMARGIN_ETI_BACKWARD(PREFIX, E, T, Y, C) \
  SOFTMARGIN_ETI_EACH_FORM(SOFTMARGIN_ETI_BACKWARD_FORM, PREFIX, E, T, Y, C)
#define SOFTMARGIN_ETI_FUSED(PREFIX, E, T, Y, C, MEM) \
  SOFTMARGIN_ETI_EACH_FORM_MEM(SOFTMARGIN_ETI_FUSED_FORM, PREFIX, E, T, Y, C, MEM)

#define SOFTMARGIN_ETI_HOST_PAIR(PREFIX, E, T, Y, C)          \
  SOFTMARGIN_ETI_FORWARD(PREFIX, E, T, Y, C, E::memory_space) \
  SOFTMARGIN_ETI_BACKWARD(PREFIX, E, T, Y, C)                 \
  SOFTMARGIN_ETI_FUSED(PREFIX, E, T, Y, C, E::memory_space)
#define SOFTMARGIN_ETI_DEVICE_PAIR(PREFIX, E, T, Y, C)                                                      \
  SOFTMARGIN_ETI_HOST_PAIR(PREFIX, E, T, Y, C)                                                              \
  SOFTMARGIN_ETI_EACH_FORM_MEM(SOFTMARGIN_ETI_LOSS_FORM, PREFIX, E, T, Y, C, Kokkos::SharedHostPinnedSpace) \
  SOFTMARGIN_ETI_EACH_FORM_MEM(SOFTMARGIN_ETI_FUSED_FORM, PREFIX, E, T, Y, C, Kokkos::SharedHostPinnedSpace)

/// float and double x with targets of their own type.
#define SOFTMARGIN_ETI_HOST_BACKEND(PREFIX, E, T) SOFTMARGIN_ETI_HOST_PAIR(PREFIX, E, T, T, T)
#define SOFTMARGIN_ETI_DEVICE_BACKEND(PREFIX, E, T) SOFTMARGIN_ETI_DEVICE_PAIR(PREFIX, E, T, T, T)
/// A 16-bit x type with targets of its own type and int8_t targets.
#define SOFTMARGIN_ETI_HOST_BACKEND_16(PREFIX, E, T) \
  SOFTMARGIN_ETI_HOST_PAIR(PREFIX, E, T, T, float)   \
  SOFTMARGIN_ETI_HOST_PAIR(PREFIX, E, T, std::int8_t, float)
#define SOFTMARGIN_ETI_DEVICE_BACKEND_16(PREFIX, E, T) \
  SOFTMARGIN_ETI_DEVICE_PAIR(PREFIX, E, T, T, float)   \
  SOFTMARGIN_ETI_DEVICE_PAIR(PREFIX, E, T, std::int8_t, float)

#if defined(SOFTMARGIN_ENABLE_ETI) && !defined(SOFTMARGIN_ETI_DEFINITION)
#if defined(KOKKOS_ENABLE_SERIAL)
SOFTMARGIN_ETI_HOST_BACKEND(extern, Kokkos::Serial, float)
SOFTMARGIN_ETI_HOST_BACKEND(extern, Kokkos::Serial, double)
SOFTMARGIN_ETI_HOST_BACKEND_16(extern, Kokkos::Serial, softmargin::bf16)
SOFTMARGIN_ETI_HOST_BACKEND_16(extern, Kokkos::Serial, softmargin::fp16)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
SOFTMARGIN_ETI_HOST_BACKEND(extern, Kokkos::OpenMP, float)
SOFTMARGIN_ETI_HOST_BACKEND(extern, Kokkos::OpenMP, double)
SOFTMARGIN_ETI_HOST_BACKEND_16(extern, Kokkos::OpenMP, softmargin::bf16)
SOFTMARGIN_ETI_HOST_BACKEND_16(extern, Kokkos::OpenMP, softmargin::fp16)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
SOFTMARGIN_ETI_DEVICE_BACKEND(extern, Kokkos::Cuda, float)
SOFTMARGIN_ETI_DEVICE_BACKEND(extern, Kokkos::Cuda, double)
SOFTMARGIN_ETI_DEVICE_BACKEND_16(extern, Kokkos::Cuda, softmargin::bf16)
SOFTMARGIN_ETI_DEVICE_BACKEND_16(extern, Kokkos::Cuda, softmargin::fp16)
#endif
#endif

#endif
