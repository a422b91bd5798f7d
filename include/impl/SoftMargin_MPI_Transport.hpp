// SoftMargin MPI: the transport of the partial sums, the options that choose it, and the communicator that holds
// them.
#ifndef SOFTMARGIN_IMPL_MPI_TRANSPORT_HPP
#define SOFTMARGIN_IMPL_MPI_TRANSPORT_HPP

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_Query_cuda_support
#endif

#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "SoftMargin_Hardware.hpp"

namespace softmargin::mpi {

/// How the partial sums of the ranks travel, for the calls that write a result View (loss, loss_and_grad); the
/// blocking forms and iloss always stage (their value is wanted on the host).
enum class Transport {
  Auto,          ///< DeviceDirect where the memory is a CUDA device's and MPI is CUDA-aware, else HostStaged
  HostStaged,    ///< the local pass writes its partial to host (pinned) memory; MPI reduces a host buffer
  DeviceDirect,  ///< the partial stays in the execution space's memory and MPI reduces it there
};

inline const char* to_string(Transport t) {
  switch (t) {
    case Transport::Auto:
      return "auto";
    case Transport::HostStaged:
      return "host-staged";
    case Transport::DeviceDirect:
      return "device-direct";
  }
  return "unknown";
}

/// Options of the calls made on a Communicator.
struct Options {
  Transport transport = Transport::Auto;
};

/// A communicator and the options of the calls made on it. Every call takes one; an MPI_Comm converts to one with
/// the default options. Every rank of a call passes the same options.
struct Communicator {
  MPI_Comm comm = MPI_COMM_NULL;
  Options options;
  Communicator(MPI_Comm c, Options o = {}) : comm(c), options(o) {}  // NOLINT(google-explicit-constructor)
};

/// Whether the MPI library accepts CUDA device pointers: MPIX_Query_cuda_support() (Open MPI) or
/// MPIX_GPU_query_support (MPICH 4) at run time; false where neither exists. Call after MPI_Init.
inline bool cuda_aware() {
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int supported = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) == MPI_SUCCESS && supported != 0;
#else
  return false;
#endif
}

namespace Impl {

template <class Exec>
inline constexpr bool host_memory_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;

/// Whether Exec's kernels keep their data in CUDA device memory (its room says so: Hardware<Exec>::device_memory)
/// and MPI takes such pointers (asked once per process).
template <class Exec>
bool cuda_direct() {
  if constexpr (softmargin::Impl::Hardware<Exec>::device_memory == softmargin::Impl::DeviceMemory::Cuda) {
    static const bool aware = cuda_aware();
    return aware;
  } else {
    return false;
  }
}

/// The transport that asked resolves to on Exec: Auto gives DeviceDirect on CUDA with a CUDA-aware MPI, else
/// HostStaged (host memory needs no staging). Throws std::invalid_argument for DeviceDirect where MPI cannot read
/// Exec's memory, and for a value that is no Transport. With result_view false (blocking forms, iloss, backward) the
/// request is checked alike and HostStaged returned.
template <class Exec>
Transport resolve_transport(const char* where, Transport asked, bool result_view = true) {
  const auto refuse = [where](const std::string& problem) {
    return std::invalid_argument(std::string(where) + ": options.transport = " + problem);
  };
  switch (asked) {
    case Transport::Auto:
      return result_view && !host_memory_v<Exec> && cuda_direct<Exec>() ? Transport::DeviceDirect
                                                                        : Transport::HostStaged;
    case Transport::HostStaged:
      return Transport::HostStaged;
    case Transport::DeviceDirect:
      if (!host_memory_v<Exec> && !cuda_direct<Exec>())
        throw refuse(std::string("device-direct, but MPI cannot read ") + Exec::name() + " memory: " +
                     (cuda_aware() ? "MPI is CUDA-aware, and the execution space is not CUDA's"
                                   : "this MPI library is not CUDA-aware (softmargin::mpi::cuda_aware() is false)") +
                     "; use Transport::Auto or Transport::HostStaged");
      return result_view ? Transport::DeviceDirect : Transport::HostStaged;
  }
  throw refuse(std::to_string(static_cast<int>(asked)) + " is not a softmargin::mpi::Transport");
}

/// After an agreement that counted the ranks whose partial travels device-direct: throws on every rank alike where
/// some ranks but not all do (their allreduces would not match).
inline void check_same_transport(MPI_Comm comm, const char* where, double direct_ranks) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (direct_ranks == 0 || direct_ranks == size) return;
  throw std::invalid_argument(std::string(where) + ": the ranks ask for different transports (device-direct on " +
                              std::to_string(static_cast<int>(direct_ranks)) + " of " + std::to_string(size) +
                              " ranks): give every rank the same Options");
}

}  // namespace Impl
}  // namespace softmargin::mpi

#endif
