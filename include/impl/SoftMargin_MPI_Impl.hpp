// SoftMargin MPI: status agreement, per-instance scratch and one-element kernels.
#ifndef SOFTMARGIN_IMPL_MPI_IMPL_HPP
#define SOFTMARGIN_IMPL_MPI_IMPL_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "../SoftMargin_Types.hpp"
#include "SoftMargin_InstanceCache.hpp"
#include "SoftMargin_MPI_Transport.hpp"
#include "SoftMargin_OpTypes.hpp"

namespace softmargin::mpi::Impl {

template <class T>
MPI_Datatype mpi_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "softmargin::mpi: float or double");
  return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

inline void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string("softmargin::mpi: ") + what + " failed: " + std::string(text, length));
}

/// The outcome of a rank's local work; failures are counted by kind in the agreement's last two slots.
struct Status {
  enum Kind : int { Ok = 0, InvalidArgument = 1, Other = 2 };
  Kind kind = Ok;
  std::string message;

  /// Runs f unless an earlier step failed; a thrown exception becomes the status.
  template <class F>
  void run(F&& f) {
    if (kind != Ok) return;
    try {
      f();
    } catch (const std::invalid_argument& e) {
      kind = InvalidArgument, message = e.what();
    } catch (const std::exception& e) {
      kind = Other, message = e.what();
    }
  }
  double invalid() const { return kind == InvalidArgument ? 1.0 : 0.0; }
  double other() const { return kind == Other ? 1.0 : 0.0; }
};

inline void check_comm(const char* where, MPI_Comm comm) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw std::logic_error(std::string(where) + ": MPI is not initialized (or already finalized)");
  if (comm == MPI_COMM_NULL) throw std::invalid_argument(std::string(where) + ": the communicator is MPI_COMM_NULL");
}

/// Every rank's status, after an agreement found failures: each rank learns which ranks failed and the lowest one's
/// message, and throws that rank's exception type with a message naming the ranks. Collective.
[[noreturn]] inline void raise(MPI_Comm comm, const char* where, const Status& status) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<int> kinds(size);
  const int mine = status.kind;
  check_mpi(MPI_Allgather(&mine, 1, MPI_INT, kinds.data(), 1, MPI_INT, comm), "MPI_Allgather");
  int first = -1;
  std::string ranks;
  for (int r = 0; r < size; ++r) {
    if (kinds[r] == Status::Ok) continue;
    if (first < 0) first = r;
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  }
  if (first < 0) first = 0;  // not reached: raise follows an agreement that counted failures
  int length = rank == first ? static_cast<int>(status.message.size()) : 0;
  check_mpi(MPI_Bcast(&length, 1, MPI_INT, first, comm), "MPI_Bcast");
  std::string message = rank == first ? status.message : std::string(length, ' ');
  check_mpi(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm), "MPI_Bcast");
  // The local message of the lowest failing rank, without its own prefix where it is this call's.
  const std::string prefix = std::string(where) + ": ";
  if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  const bool several = ranks.find(',') != std::string::npos;
  const std::string text = prefix + "failed on rank" + (several ? "s " : " ") + ranks + " of " + std::to_string(size) +
                           (several ? "; rank " + std::to_string(first) + ": " : ": ") + message;
  if (kinds[first] == Status::InvalidArgument) throw std::invalid_argument(text);
  throw std::runtime_error(text);
}

/// Sums buffer over the ranks (in place); the last two slots count the ranks that failed, by kind; throws on every
/// rank if any failed.
template <std::size_t K>
void agree(MPI_Comm comm, const char* where, std::array<double, K>& buffer, const Status& status) {
  static_assert(K >= 2);
  buffer[K - 2] = status.invalid();
  buffer[K - 1] = status.other();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(K), MPI_DOUBLE, MPI_SUM, comm),
            "MPI_Allreduce");
  if (buffer[K - 2] + buffer[K - 1] > 0) raise(comm, where, status);
}

// ---------------------------------------------------------------------------------------------------------------
// One-element kernels on the caller's instance: device outputs are written in stream order, without a fence.

template <class View>
using unmanaged_t = Kokkos::View<typename View::data_type, typename View::array_layout, typename View::memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// What a one-element kernel divides by: a host number, or a caller's count read where the kernel runs.
using Divisor = softmargin::Impl::Divisor<double>;

/// dst() = value / divisor.
template <class Dst>
struct Assign {
  Dst dst;
  double value;
  Divisor divisor;
  KOKKOS_FUNCTION void operator()(int) const {
    dst() = static_cast<typename Dst::non_const_value_type>(value / divisor.get());
  }
};

/// dst() = src() / divisor.
template <class Dst, class Src>
struct Divide {
  Dst dst;
  Src src;
  Divisor divisor;
  KOKKOS_FUNCTION void operator()(int) const {
    dst() = static_cast<typename Dst::non_const_value_type>(static_cast<double>(src()) / divisor.get());
  }
};

/// dst() = the count, read where the kernel runs.
template <class Dst>
struct ReadCount {
  Dst dst;
  Divisor count;
  KOKKOS_FUNCTION void operator()(int) const { dst() = count.read_count(); }
};

/// Writes value / divisor into the rank-0 View dst: from the host where it may (host memory the execution space
/// cannot reach, or host memory with nothing pending on it, and a divisor the host holds), else with a one-thread
/// kernel on space (in stream order, no fence). A divisor in memory goes with a dst the space reaches.
template <class Exec, class Dst>
void assign(const Exec& space, const Dst& dst, double value, bool host_may_write, Divisor divisor = {1.0}) {
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Dst::memory_space>::accessible;
  constexpr bool device = Kokkos::SpaceAccessibility<Exec, typename Dst::memory_space>::accessible;
  static_assert(host || device, "softmargin::mpi: a result must be accessible from the execution space or the host");
  const Assign<unmanaged_t<Dst>> op{unmanaged_t<Dst>(dst.data()), value, divisor};
  if constexpr (host) {
    if ((host_may_write && divisor.count == nullptr) || !device) return op(0);
  }
  if constexpr (device) Kokkos::parallel_for("softmargin::mpi::assign", Kokkos::RangePolicy<Exec>(space, 0, 1), op);
}

/// dst() = src() / divisor with a one-thread kernel on space, in stream order.
template <class Exec, class Dst, class Src>
void divide(const Exec& space, const Dst& dst, const Src& src, Divisor divisor) {
  using D = unmanaged_t<Dst>;
  using S = unmanaged_t<Src>;
  Kokkos::parallel_for("softmargin::mpi::divide", Kokkos::RangePolicy<Exec>(space, 0, 1),
                       Divide<D, S>{D(dst.data()), S(src.data()), divisor});
}

/// dst() = the caller's count of mean_over(View), read on space (in stream order): the host reads dst after a fence.
template <class Exec, class Dst>
void read_count(const Exec& space, const Dst& dst, const ReduceBy& reduction) {
  using D = unmanaged_t<Dst>;
  Kokkos::parallel_for("softmargin::mpi::read_count", Kokkos::RangePolicy<Exec>(space, 0, 1),
                       ReadCount<D>{D(dst.data()), {1.0, reduction.count_data(), reduction.count_type()}});
}

// ---------------------------------------------------------------------------------------------------------------
// Scratch of one call: the partial sum (host-staged, or in the execution space's memory), a scaled upstream
// gradient and a caller's count read for the host, from the instance cache (device backends: the instance's own set,
// locked for the call; host backends: a pooled set of the calling thread's own).

template <class Exec, class P, class T>
struct ScratchSet {
  using Mem = typename Exec::memory_space;
  using Staged = std::conditional_t<host_memory_v<Exec>, Mem, Kokkos::SharedHostPinnedSpace>;
  Kokkos::View<P, Staged> staged;
  Kokkos::View<P, Mem> direct;
  Kokkos::View<T, Mem> upstream;
  Kokkos::View<double, Staged> count;
  explicit ScratchSet(const Exec& space)
      : staged(Kokkos::view_alloc(space, "softmargin::mpi::staged")),
        direct(Kokkos::view_alloc(space, "softmargin::mpi::direct")),
        upstream(Kokkos::view_alloc(space, "softmargin::mpi::upstream")),
        count(Kokkos::view_alloc(space, "softmargin::mpi::count")) {
    space.fence("softmargin::mpi: scratch allocated");
  }
  bool fits() const { return true; }
};

/// The scratch of one call, held from acquire() to the end of the call.
template <class Exec, class P, class T>
class Scratch {
 public:
  using Set = ScratchSet<Exec, P, T>;
  void acquire(const Exec& space) { lease_.emplace(softmargin::Impl::InstanceCache<Exec, Set>::acquire(space)); }
  /// The set's Views; empty Views when acquire() did not run (a call whose arguments failed their checks first).
  decltype(Set::staged) staged() const { return lease_ ? (*lease_)->staged : decltype(Set::staged)(); }
  decltype(Set::direct) direct() const { return lease_ ? (*lease_)->direct : decltype(Set::direct)(); }
  decltype(Set::upstream) upstream() const { return lease_ ? (*lease_)->upstream : decltype(Set::upstream)(); }
  decltype(Set::count) count() const { return lease_ ? (*lease_)->count : decltype(Set::count)(); }

 private:
  std::optional<typename softmargin::Impl::InstanceCache<Exec, Set>::Lease> lease_;
};

}  // namespace softmargin::mpi::Impl

#endif
