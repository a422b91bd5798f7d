// SoftMargin: the instantiations compiled once into the library (src/SoftMargin_ETI_*.cpp).
//
// SOFTMARGIN_ETI_FORWARD(PREFIX, EXEC, T) names the launchers of one backend and value type for every rank and
// layout: flat (any contiguous input, any rank), and strided rank 1 and 2. With PREFIX `extern` it declares them
// (user code links them instead of compiling the kernels); with an empty PREFIX, src/ defines them.
#ifndef SOFTMARGIN_IMPL_ETI_HPP
#define SOFTMARGIN_IMPL_ETI_HPP

#include "SoftMargin_Forward_Impl.hpp"

#define SOFTMARGIN_ETI_FORWARD_RESULT(PREFIX, EXEC, T, RMEM)                                                       \
  PREFIX template struct softmargin::Impl::Reduce<EXEC, softmargin::Impl::FlatView<const T, EXEC>,                  \
                                                  softmargin::Impl::FlatView<const T, EXEC>,                        \
                                                  softmargin::Impl::ScalarView<T, EXEC, RMEM>>;                     \
  PREFIX template struct softmargin::Impl::Reduce<EXEC, softmargin::Impl::StridedView<const T, 1, EXEC>,            \
                                                  softmargin::Impl::StridedView<const T, 1, EXEC>,                  \
                                                  softmargin::Impl::ScalarView<T, EXEC, RMEM>>;                     \
  PREFIX template struct softmargin::Impl::Reduce<EXEC, softmargin::Impl::StridedView<const T, 2, EXEC>,            \
                                                  softmargin::Impl::StridedView<const T, 2, EXEC>,                  \
                                                  softmargin::Impl::ScalarView<T, EXEC, RMEM>>;

#define SOFTMARGIN_ETI_FORWARD(PREFIX, EXEC, T)                                                                     \
  SOFTMARGIN_ETI_FORWARD_RESULT(PREFIX, EXEC, T, EXEC::memory_space)                                                \
  PREFIX template struct softmargin::Impl::Elementwise<EXEC, softmargin::Impl::FlatView<const T, EXEC>,             \
                                                       softmargin::Impl::FlatView<const T, EXEC>,                   \
                                                       softmargin::Impl::FlatView<T, EXEC>>;                        \
  PREFIX template struct softmargin::Impl::Elementwise<EXEC, softmargin::Impl::StridedView<const T, 1, EXEC>,       \
                                                       softmargin::Impl::StridedView<const T, 1, EXEC>,             \
                                                       softmargin::Impl::StridedView<T, 1, EXEC>>;                  \
  PREFIX template struct softmargin::Impl::Elementwise<EXEC, softmargin::Impl::StridedView<const T, 2, EXEC>,       \
                                                       softmargin::Impl::StridedView<const T, 2, EXEC>,             \
                                                       softmargin::Impl::StridedView<T, 2, EXEC>>;

/// Device backends also compile the reduction into host-pinned memory that the blocking overloads use.
#define SOFTMARGIN_ETI_FORWARD_DEVICE(PREFIX, EXEC, T) \
  SOFTMARGIN_ETI_FORWARD(PREFIX, EXEC, T)              \
  SOFTMARGIN_ETI_FORWARD_RESULT(PREFIX, EXEC, T, Kokkos::SharedHostPinnedSpace)

#if defined(SOFTMARGIN_ENABLE_ETI) && !defined(SOFTMARGIN_ETI_DEFINITION)
#if defined(KOKKOS_ENABLE_SERIAL)
SOFTMARGIN_ETI_FORWARD(extern, Kokkos::Serial, float)
SOFTMARGIN_ETI_FORWARD(extern, Kokkos::Serial, double)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
SOFTMARGIN_ETI_FORWARD(extern, Kokkos::OpenMP, float)
SOFTMARGIN_ETI_FORWARD(extern, Kokkos::OpenMP, double)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
SOFTMARGIN_ETI_FORWARD_DEVICE(extern, Kokkos::Cuda, float)
SOFTMARGIN_ETI_FORWARD_DEVICE(extern, Kokkos::Cuda, double)
#endif
#endif

#endif
