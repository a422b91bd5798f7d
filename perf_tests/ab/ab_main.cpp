// softmargin_ab: times the host passes of two source trees (A: the base, B: the one compared with it) in one process,
// alternately: each round times a batch of calls of A and one of B (the order flipping from round to round) on the
// same buffers, so both see the same machine state; prints the median ratio B / A a row, with its quartiles.
// Usage: softmargin_ab [--rounds=21] [--sizes=2^16,...,2^24 (512x4096 stands for 2^21)] [--ms=3 (a batch)]
//   and Kokkos' flags (--kokkos-num-threads=T).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ab.hpp"

namespace {

std::uint16_t bf16_bits(const float f) {  // round to nearest even (finite inputs)
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
std::uint16_t fp16_bits(const float f) {  // round to nearest even for |f| in [2^-14, 65504], else 0 (inputs here)
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u, mag = u & 0x7fffffffu;
  if (mag < 0x38800000u) return static_cast<std::uint16_t>(sign);
  const std::uint32_t r = mag - 0x38000000u;  // rebias the exponent by 112
  return static_cast<std::uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
}

struct Size {
  std::string name;
  std::size_t n;
};
std::vector<Size> parse_sizes(const std::string& list) {
  std::vector<Size> out;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');) {
    std::size_t n = 0;
    if (item.rfind("2^", 0) == 0)
      n = std::size_t(1) << std::atoi(item.c_str() + 2);
    else if (const auto x = item.find('x'); x != std::string::npos)
      n = std::stoul(item.substr(0, x)) * std::stoul(item.substr(x + 1));
    else
      n = std::stoul(item);
    out.push_back({item, n});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  int rounds = 21;
  double batch_ms = 3;
  std::string sizes_arg = "2^16,2^18,2^20,512x4096,2^22,2^24";
  for (int a = 1; a < argc; ++a) {
    if (!std::strncmp(argv[a], "--rounds=", 9)) rounds = std::atoi(argv[a] + 9);
    if (!std::strncmp(argv[a], "--sizes=", 8)) sizes_arg = argv[a] + 8;
    if (!std::strncmp(argv[a], "--ms=", 5)) batch_ms = std::atof(argv[a] + 5);
  }
  const auto sizes = parse_sizes(sizes_arg);
  std::size_t N = 0;
  for (const auto& s : sizes) N = std::max(N, s.n);

  // Kokkos allocations: aligned as the library's packs need (a std::vector's data may not be).
  const auto alloc = [&](auto tag) { return Kokkos::View<decltype(tag)*, Kokkos::HostSpace>("softmargin_ab", N); };
  auto xf = alloc(0.0f), yf = alloc(0.0f), gf = alloc(0.0f);
  auto xd = alloc(0.0), yd = alloc(0.0), gd = alloc(0.0);
  auto xb = alloc(std::uint16_t()), yb = alloc(std::uint16_t()), xh = alloc(std::uint16_t()),
       yh = alloc(std::uint16_t()), gh = alloc(std::uint16_t());
  auto y8 = alloc(std::int8_t());
  const Kokkos::View<float, Kokkos::HostSpace> loss_f("softmargin_ab::loss");
  const Kokkos::View<double, Kokkos::HostSpace> loss_d("softmargin_ab::loss");
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
  for (std::size_t i = 0; i < N; ++i) {
    xf[i] = uniform(rng);
    yf[i] = (rng() & 1u) ? 1.0f : -1.0f;
    xd[i] = xf[i];
    yd[i] = yf[i];
    y8[i] = static_cast<std::int8_t>(yf[i]);
    xb[i] = bf16_bits(xf[i]);
    yb[i] = bf16_bits(yf[i]);
    xh[i] = fp16_bits(xf[i]);
    yh[i] = fp16_bits(yf[i]);
  }
  struct Row {
    AbType type;
    const char* name;
    std::vector<AbPass> passes;
  };
  const std::vector<AbPass> all = {AbPass::Mean, AbPass::None, AbPass::Backward, AbPass::Fused};
  const std::vector<AbPass> half = {AbPass::Mean, AbPass::Backward, AbPass::Fused};
  const std::vector<Row> rows = {{AbType::Fp32, "fp32", all},
                                 {AbType::Fp64, "fp64", all},
                                 {AbType::Bf16Int8, "bf16+int8", half},
                                 {AbType::Bf16Bf16, "bf16+bf16", half},
                                 {AbType::Fp16Int8, "fp16+int8", half},
                                 {AbType::Fp16Fp16, "fp16+fp16", half},
                                 {AbType::Fp32Serial, "fp32, Serial", {AbPass::Mean}}};
  const char* pass_names[] = {"mean", "none", "backward", "fused"};
  const int threads = Kokkos::OpenMP().concurrency();
  std::printf(
      "| x + y | pass | N | threads | B / A (median) | quartiles | A us | B us "
      "|\n|---|---|---|---:|---:|---:|---:|---:|\n");
  double worst = 0;
  std::string worst_row;
  for (const auto& row : rows) {
    const bool bf = row.type == AbType::Bf16Int8 || row.type == AbType::Bf16Bf16;
    for (const AbPass p : row.passes) {
      for (const auto& size : sizes) {
        const AbBuffers b{xf.data(),
                          yf.data(),
                          gf.data(),
                          xd.data(),
                          yd.data(),
                          gd.data(),
                          bf ? xb.data() : xh.data(),
                          bf ? yb.data() : yh.data(),
                          gh.data(),
                          y8.data(),
                          size.n,
                          loss_f,
                          loss_d,
                          Kokkos::OpenMP(),
                          Kokkos::Serial()};
        const auto time = [&](void (*run)(const AbBuffers&, AbType, AbPass), int calls) {
          const auto t0 = std::chrono::steady_clock::now();
          for (int c = 0; c < calls; ++c) run(b, row.type, p);
          return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
        };
        time(run_a, 1);
        time(run_b, 1);
        const int calls = std::max(1, static_cast<int>(batch_ms * 1000 / std::max(time(run_a, 2), 0.1)));
        std::vector<double> ratio, ta, tb;
        for (int r = 0; r < rounds; ++r) {
          double a, bt;
          if (r % 2) {
            bt = time(run_b, calls);
            a = time(run_a, calls);
          } else {
            a = time(run_a, calls);
            bt = time(run_b, calls);
          }
          ta.push_back(a);
          tb.push_back(bt);
          ratio.push_back(bt / a);
        }
        for (auto* v : {&ratio, &ta, &tb}) std::sort(v->begin(), v->end());
        const auto q = [&](const std::vector<double>& v, int k) { return v[(v.size() - 1) * k / 4]; };
        std::printf("| %s | %s | %s | %d | %.3f | %.3f-%.3f | %.1f | %.1f |\n", row.name, pass_names[int(p)],
                    size.name.c_str(), threads, q(ratio, 2), q(ratio, 1), q(ratio, 3), q(ta, 2), q(tb, 2));
        std::fflush(stdout);
        if (q(ratio, 2) > worst) {
          worst = q(ratio, 2);
          worst_row = std::string(row.name) + " " + pass_names[int(p)] + " " + size.name;
        }
      }
    }
  }
  std::printf("\nHighest median B / A: %.3f (%s), %d threads, %d rounds\n", worst, worst_row.c_str(), threads, rounds);
  return 0;
}
