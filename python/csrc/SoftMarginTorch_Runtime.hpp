// SoftMargin for PyTorch: the Kokkos runtime under the operators.
#ifndef SOFTMARGIN_TORCH_RUNTIME_HPP
#define SOFTMARGIN_TORCH_RUNTIME_HPP

namespace softmargin::torch_ops {

/// Makes Kokkos usable: on the first call, initializes it unless the process already has (then the process owns it
/// and finalizes it), and if initialized here, finalizes it at exit. Cheap after the first call. Throws (c10::Error)
/// once Kokkos has been finalized. Thread-safe.
void ensure_kokkos();

/// Whether ensure_kokkos() has nothing left to do (Kokkos is initialized and not finalized).
bool kokkos_ready();

}  // namespace softmargin::torch_ops

#endif
