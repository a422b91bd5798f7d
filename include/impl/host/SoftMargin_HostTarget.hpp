// SoftMargin host room: what the host compiler and instruction set offer, found once. Every other file of the room
// tests these macros, not the compiler's.
//  - SOFTMARGIN_IMPL_HOST_VECTORS: GCC or Clang vector extensions in host code (not under a device compiler, which
//    compiles the host backends of a CUDA or HIP build).
//  - SOFTMARGIN_IMPL_HOST_SIMD: host vectors, and Kokkos SIMD has a native ABI for the architecture Kokkos was built
//    for (KOKKOS_ARCH_AVX512XEON, _AVX2, _ARM_SVE or _ARM_NEON): the pack kernels of SoftMargin_HostPacks.hpp, on
//    Kokkos SIMD (SoftMargin_HostSimd.hpp).
//  - SOFTMARGIN_IMPL_AVX512: x86-64 with AVX-512F as well: the lane sums of SoftMargin_HostPacks.hpp and the
//    conversions of SoftMargin_HostConvertX86.hpp (SoftMargin_HostSimd.hpp's one-instruction forms follow its ABI).
// kHostPackPath and kHostVectorIsa name what a build compiles, for tests and build information to check.
#ifndef SOFTMARGIN_IMPL_HOST_TARGET_HPP
#define SOFTMARGIN_IMPL_HOST_TARGET_HPP

#include <Kokkos_Macros.hpp>

#if !defined(__CUDACC__) && !defined(__HIPCC__) && (defined(__GNUC__) || defined(__clang__))
#define SOFTMARGIN_IMPL_HOST_VECTORS 1
#if defined(__x86_64__) && (defined(__AVX2__) || defined(__F16C__) || defined(__AVX512F__))
#include <immintrin.h>
#endif
#if defined(__x86_64__) && defined(__AVX512F__)
#define SOFTMARGIN_IMPL_AVX512 1
#endif
#if defined(KOKKOS_ARCH_AVX512XEON) || defined(KOKKOS_ARCH_AVX2) || defined(KOKKOS_ARCH_ARM_SVE) || \
    defined(KOKKOS_ARCH_ARM_NEON)
#define SOFTMARGIN_IMPL_HOST_SIMD 1
#endif
#endif

// What this build compiles, named (kHostPackPath, kHostVectorIsa).
#if defined(SOFTMARGIN_IMPL_HOST_SIMD)
#define SOFTMARGIN_IMPL_HOST_PACK_PATH "simd"
#elif defined(SOFTMARGIN_IMPL_HOST_VECTORS)
#define SOFTMARGIN_IMPL_HOST_PACK_PATH "vector"
#else
#define SOFTMARGIN_IMPL_HOST_PACK_PATH "scalar"
#endif
#if !defined(SOFTMARGIN_IMPL_HOST_VECTORS)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "none"
#elif defined(SOFTMARGIN_IMPL_HOST_SIMD) && defined(KOKKOS_ARCH_AVX512XEON)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "avx512"
#elif defined(SOFTMARGIN_IMPL_HOST_SIMD) && defined(KOKKOS_ARCH_AVX2)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "avx2"
#elif defined(SOFTMARGIN_IMPL_HOST_SIMD) && defined(KOKKOS_ARCH_ARM_SVE)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "sve"
#elif defined(SOFTMARGIN_IMPL_HOST_SIMD)
#define SOFTMARGIN_IMPL_HOST_VECTOR_ISA "neon"
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

/// The host pack path this build compiles: "simd" (the pack kernels on Kokkos SIMD), "vector" (GCC/Clang vectors
/// for conversions, the loss element by element: no Kokkos SIMD ABI), "scalar" (neither: the core's element by element
/// code).
constexpr const char* kHostPackPath = SOFTMARGIN_IMPL_HOST_PACK_PATH;

/// The vector instructions of the host code: the Kokkos SIMD ABI of the pack kernels ("avx512", "avx2", "sve",
/// "neon"), else the widest the compiler targets ("sse2" and the others on x86-64, "neon" on aarch64), or "none"
/// (other targets, or no host vectors).
constexpr const char* kHostVectorIsa = SOFTMARGIN_IMPL_HOST_VECTOR_ISA;

}  // namespace softmargin::Impl

#endif
