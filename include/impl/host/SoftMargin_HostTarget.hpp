// SoftMargin host room: what the host compiler and instruction set offer, found once. Every other file of the room
// tests these macros, not the compiler's.
//  - SOFTMARGIN_IMPL_HOST_VECTORS: GCC or Clang vector extensions in host code (not under a device compiler, which
//    compiles the host backends of a CUDA or HIP build).
//  - SOFTMARGIN_IMPL_AVX512: x86-64 with AVX-512F as well: the pack kernels of SoftMargin_HostPacks.hpp.
// kHostPackPath and kHostVectorIsa name what a build compiles, for tests and build information to check.
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

// What this build compiles, named (kHostPackPath, kHostVectorIsa).
#if defined(SOFTMARGIN_IMPL_AVX512)
#define SOFTMARGIN_IMPL_HOST_PACK_PATH "avx512"
#elif defined(SOFTMARGIN_IMPL_HOST_VECTORS)
#define SOFTMARGIN_IMPL_HOST_PACK_PATH "vector"
#else
#define SOFTMARGIN_IMPL_HOST_PACK_PATH "scalar"
#endif
#if !defined(SOFTMARGIN_IMPL_HOST_VECTORS)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "none"
#elif defined(__x86_64__) && defined(__AVX512F__)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "avx512"
#elif defined(__x86_64__) && defined(__AVX2__)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "avx2"
#elif defined(__x86_64__)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "sse2"
#elif defined(__aarch64__) && defined(__ARM_FEATURE_SVE)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "sve"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "neon"
#else
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "none"
#endif

namespace softmargin::Impl {

// Not inline: each translation unit keeps its own (one compiled by a device compiler may differ).

/// The host pack path this build compiles: "avx512" (the AVX-512 pack kernels), "vector" (GCC/Clang vectors without
/// them), "scalar" (neither: the core's element by element code).
constexpr const char* kHostPackPath = SOFTMARGIN_IMPL_HOST_PACK_PATH;

/// The widest vector instructions the host code targets: "avx512", "avx2", "sse2" (x86-64), "sve", "neon" (aarch64),
/// "none" (other targets, or no host vectors).
constexpr const char* kHostVectorIsa = SOFTMARGIN_IMPL_HOST_VECTOR_ISA;

}  // namespace softmargin::Impl

#endif
