// SoftMargin for PyTorch: Kokkos initialized on first use, finalized at exit if initialized here.
#include "SoftMarginTorch_Runtime.hpp"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <Kokkos_Core.hpp>
#include <atomic>
#include <cstdlib>
#include <mutex>

#if defined(SOFTMARGIN_TORCH_CUDA)
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace softmargin::torch_ops {
namespace {

// The runtime's lock lives on the heap and is never destroyed: Kokkos::finalize may run at exit (our atexit handler,
// or the process's own) after the static destructors of objects made after that handler was registered. The caches
// of Kokkos objects (softmargin::Impl::Cache) register their own finalize hooks.
std::mutex& runtime_mutex() {
  static auto* m = new std::mutex;
  return *m;
}

std::atomic<bool> ready{false};  ///< Kokkos is initialized and our finalize hook is registered
bool hook_registered = false;
bool owned = false;  ///< initialized here, so finalized here at exit

// Runs at Kokkos::finalize, whoever calls it: marks the runtime as gone.
void on_kokkos_finalize() {
  std::lock_guard<std::mutex> lock(runtime_mutex());
  ready.store(false, std::memory_order_release);
}

void finalize_at_exit() {
  if (owned && Kokkos::is_initialized() && !Kokkos::is_finalized()) Kokkos::finalize();
}

void initialize_locked() {
  TORCH_CHECK(!Kokkos::is_finalized(),
              "softmargin: Kokkos has been finalized in this process; the SoftMargin operators cannot run after "
              "Kokkos::finalize");
  if (!Kokkos::is_initialized()) {
    Kokkos::InitializationSettings settings;
    settings.set_disable_warnings(true);
#if defined(KOKKOS_ENABLE_OPENMP)
    settings.set_num_threads(at::get_num_threads());  // the host backend uses torch's intra-op threads
#endif
#if defined(SOFTMARGIN_TORCH_CUDA)
    TORCH_CHECK(c10::cuda::device_count() > 0,
                "softmargin: this build runs on Kokkos' CUDA backend, which needs a CUDA device, and there is none");
    settings.set_device_id(c10::cuda::current_device());
#endif
    Kokkos::initialize(settings);
    owned = true;
    std::atexit(finalize_at_exit);  // registered after the CUDA runtime's own exit handlers, so it runs before them
  }
  if (!hook_registered) {
    Kokkos::push_finalize_hook(on_kokkos_finalize);
    hook_registered = true;
  }
  ready.store(true, std::memory_order_release);
}

}  // namespace

void ensure_kokkos() {
  if (ready.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(runtime_mutex());
  if (!ready.load(std::memory_order_relaxed)) initialize_locked();
}

bool kokkos_ready() { return ready.load(std::memory_order_acquire); }

}  // namespace softmargin::torch_ops
