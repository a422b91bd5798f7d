// SoftMargin for PyTorch: the Kokkos runtime under the operators.
#ifndef SOFTMARGIN_TORCH_RUNTIME_HPP
#define SOFTMARGIN_TORCH_RUNTIME_HPP

#include <functional>

namespace softmargin::torch_ops {

/// Makes Kokkos usable: on the first call, initializes it unless the process already has (then the process owns it
/// and finalizes it), and if initialized here, finalizes it at exit. Cheap after the first call. Throws (c10::Error)
/// once Kokkos has been finalized. Thread-safe.
void ensure_kokkos();

/// Whether ensure_kokkos() has nothing left to do (Kokkos is initialized and not finalized).
bool kokkos_ready();

/// Registers f to run when Kokkos is finalized, before it finalizes its backends (for caches of Kokkos objects).
void at_kokkos_finalize(std::function<void()> f);

}  // namespace softmargin::torch_ops

#endif
