// SoftMargin host room: what the host compiler and instruction set offer, found once. Every other file of the room
// tests these macros, not the compiler's.
//  - SOFTMARGIN_IMPL_HOST_VECTORS: GCC or Clang vector extensions in host code (not under a device compiler, which
//    compiles the host backends of a CUDA or HIP build).
//  - SOFTMARGIN_IMPL_AVX512: x86-64 with AVX-512F as well: the pack kernels of SoftMargin_HostPacks.hpp.
#ifndef SOFTMARGIN_IMPL_HOST_TARGET_HPP
#define SOFTMARGIN_IMPL_HOST_TARGET_HPP

#if !defined(__CUDACC__) && !defined(__HIPCC__) && (defined(__GNUC__) || defined(__clang__))
#define SOFTMARGIN_IMPL_HOST_VECTORS 1
#if defined(__x86_64__) && (defined(__AVX2__) || defined(__F16C__) || defined(__AVX512F__))
#include <immintrin.h>
#endif
#if defined(__x86_64__) && defined(__AVX512F__)
#define SOFTMARGIN_IMPL_AVX512 1
#endif
#endif

#endif
