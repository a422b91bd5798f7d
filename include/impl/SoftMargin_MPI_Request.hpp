// SoftMargin MPI: the non-blocking global loss (MPI_Iallreduce) and its request.
#ifndef SOFTMARGIN_IMPL_MPI_REQUEST_HPP
#define SOFTMARGIN_IMPL_MPI_REQUEST_HPP

#include <SoftMargin.hpp>
#include <array>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "SoftMargin_MPI_Checks.hpp"
#include "SoftMargin_MPI_Impl.hpp"
#include "SoftMargin_MPI_Passes.hpp"

namespace softmargin::mpi {

namespace Impl {
/// A loss in flight: MPI's request and buffer, the rank's status, and how to write the result.
struct RequestState {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  std::array<double, 4> sums{};  ///< partial sum, count, failed ranks (invalid argument, other); MPI's buffer
  Status status;
  std::string where;                     ///< the call's name in messages
  ReduceBy reduction = Reduction::Mean;  ///< a caller's count in memory is read before the allreduce starts
  std::function<void(double)> write;
  bool arrived = false;
};
}  // namespace Impl

/// A global loss in flight (from iloss). wait() must be called on every rank, as the collective it completes.
class Request {
 public:
  Request() = default;
  explicit Request(std::unique_ptr<Impl::RequestState> state) : state_(std::move(state)) {}
  Request(Request&&) noexcept = default;
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      complete();
      state_ = std::move(other.state_);
    }
    return *this;
  }
  /// Completes an allreduce still in flight (MPI requires it) without writing the result.
  ~Request() { complete(); }

  /// Whether the ranks' sums have arrived (MPI_Test); wait() then returns without waiting.
  bool test() {
    if (!state_) return true;
    if (!state_->arrived) {
      int flag = 0;
      Impl::check_mpi(MPI_Test(&state_->request, &flag, MPI_STATUS_IGNORE), "MPI_Test");
      state_->arrived = flag != 0;
    }
    return state_->arrived;
  }

  /// Completes the allreduce, throws on every rank if any rank's arguments were bad (as the blocking forms do),
  /// writes the result View in its execution space's order and returns the global value.
  double wait() {
    if (!state_) throw std::logic_error("softmargin::mpi::Request::wait: no loss in flight (waited already, or moved)");
    std::unique_ptr<Impl::RequestState> state = std::move(state_);
    if (!state->arrived) Impl::check_mpi(MPI_Wait(&state->request, MPI_STATUS_IGNORE), "MPI_Wait");
    const auto& s = state->sums;
    if (s[2] + s[3] > 0) Impl::raise(state->comm, state->where.c_str(), state->status);
    const double value = s[0] / Impl::global_divisor(state->reduction, s[1]);
    state->write(value);
    return value;
  }

  /// Whether a loss is in flight (wait() not yet called).
  bool active() const { return static_cast<bool>(state_); }

 private:
  void complete() noexcept {
    if (state_ && !state_->arrived) MPI_Wait(&state_->request, MPI_STATUS_IGNORE);
    state_.reset();
  }

  std::unique_ptr<Impl::RequestState> state_;
};

namespace Impl {

/// iloss: checks (the options' transport too) and the local pass as in loss, staged whatever the options ask (a
/// caller's count in memory is read with it), then MPI_Iallreduce of the 4 doubles.
template <class ExecSpace, class Problem, class ResultView>
Request iloss(const Communicator& c, const ExecSpace& space, const Problem& problem, const ResultView& result,
              const ReduceBy& reduction, Algorithm algorithm) {
  auto state = std::make_unique<RequestState>();
  state->where = problem.where("softmargin::mpi::iloss");
  const char* where = state->where.c_str();
  const MPI_Comm comm = c.comm;
  check_comm(where, comm);
  using T = typename Problem::value_type;
  const std::size_t n = problem.size();
  Status& status = state->status;
  Scratch<ExecSpace, partial_t<T>, T> scratch;
  status.run([&] {
    check_problem<ExecSpace>(where, problem, reduction, algorithm);
    check_result(where, "result", problem, result);
    resolve_transport<ExecSpace>(where, c.options.transport, false);
    scratch.acquire(space);
  });
  const auto partial = scratch.staged();
  const bool count_in_memory = reduction.count_data() != nullptr;
  status.run([&] {
    if (n > 0) problem.run_loss(space, partial, Reduction::Sum, algorithm);
    if (count_in_memory) read_count(space, scratch.count(), reduction);
  });
  space.fence("softmargin::mpi::iloss: partial sum");
  const bool ok = status.kind == Status::Ok;
  state->sums = {ok && n > 0 ? static_cast<double>(partial()) : 0.0, static_cast<double>(n), status.invalid(),
                 status.other()};
  state->comm = comm;
  state->reduction = count_in_memory && ok ? mean_over(static_cast<double>(scratch.count()())) : reduction;
  // The result is written in space's order: by a kernel, or by the host on host backends.
  state->write = [space, result](double value) { assign(space, result, value, host_memory_v<ExecSpace>); };
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, state->sums.data(), 4, MPI_DOUBLE, MPI_SUM, comm, &state->request),
            "MPI_Iallreduce");
  return Request(std::move(state));
}

}  // namespace Impl
}  // namespace softmargin::mpi

#endif
