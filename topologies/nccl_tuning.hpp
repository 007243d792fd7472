#pragma once
// NCCL's own cost-model constants (software stack, not hardware): base and per-hop latencies
// of each algorithm and protocol, and the bandwidth refinements NCCL applies per protocol.
// Source: hardware.md §3.8, from NCCL src/graph/tuning.cc at commit 5067397; the protocol
// bandwidth fractions follow from the wire formats (LL: 4 B of flag per 4 B of data; LL128:
// 8 B of flag per 128 B line) as NCCL's tuning.cc models them.
#include <array>

namespace clustersim::topologies {

enum class Protocol { ll, ll128, simple };
inline constexpr std::array<Protocol, 3> kProtocols = {Protocol::ll, Protocol::ll128, Protocol::simple};
inline const char* name(Protocol p) { return p == Protocol::ll ? "LL" : p == Protocol::ll128 ? "LL128" : "Simple"; }

enum class HopKind { nvlink, pci, net };

struct AlgoLatency {
  std::array<double, 3> base_s;                 ///< by Protocol
  std::array<std::array<double, 3>, 3> hop_s;   ///< [HopKind][Protocol]
};

// hardware.md §3.8 table, µs → s.
inline constexpr AlgoLatency kTreeLatency{
    {6.8e-6, 14.0e-6, 8.4e-6},
    {{{0.6e-6, 1.25e-6, 4.0e-6}, {1.0e-6, 1.9e-6, 4.0e-6}, {5.0e-6, 8.5e-6, 14e-6}}}};
inline constexpr AlgoLatency kRingLatency{
    {6.6e-6, 14.0e-6, 8.4e-6},
    {{{0.6e-6, 1.9e-6, 3.4e-6}, {1.0e-6, 2.5e-6, 5.7e-6}, {2.7e-6, 4.0e-6, 14.0e-6}}}};

// NVLS: base 0, NVLink hop 25 µs (Simple only).
inline constexpr AlgoLatency kNvlsLatency{
    {0.0, 0.0, 0.0},
    {{{0.0, 0.0, 25e-6}, {0.0, 0.0, 25e-6}, {0.0, 0.0, 18e-6}}}};

/// What a collective costs beyond NCCL's own latency model: launching it from the host and
/// synchronising the ranks (no CUDA graphs). hardware.md §3.8: a 32 KiB all-reduce on 8 A100s
/// takes 43.8 µs in nccl-tests and ≈40 µs on 8 H200s in PyTorch, where NCCL's LL ring model
/// gives 6.6 + 14 × 0.6 = 15.0 µs; the difference, ≈28 µs [D], is added once per collective.
/// (§5 suggests ≈40 µs in all for 8 GPUs without graphs.)
inline constexpr double kCollectiveLaunchOverhead_s = 28e-6;

/// NCCL uses NVLS only for more than this many GPUs in a node (hardware.md §3.6: H200 stays on
/// Ring with 4 GPUs and switches to NVLS from 5).
inline constexpr int kNvlsMinRanks = 5;

inline double hop_latency_s(const AlgoLatency& a, HopKind h, Protocol p) {
  return a.hop_s[static_cast<int>(h)][static_cast<int>(p)];
}
inline double base_latency_s(const AlgoLatency& a, Protocol p) { return a.base_s[static_cast<int>(p)]; }

/// Fraction of the Simple protocol's bandwidth a protocol reaches (tuning.cc: ring LL ×0.5,
/// ring LL128 ×0.92; tree LL ×1/3.8, tree LL128 ×120/128).
inline double ring_protocol_bw_fraction(Protocol p) {
  return p == Protocol::ll ? 0.5 : p == Protocol::ll128 ? 0.92 : 1.0;
}
inline double tree_protocol_bw_fraction(Protocol p) {
  return p == Protocol::ll ? 1.0 / 3.8 : p == Protocol::ll128 ? 120.0 / 128.0 : 1.0;
}
/// tuning.cc: tree all-reduce bandwidth ×0.92 on top of the protocol fraction.
inline constexpr double kTreeAllReduceBwFraction = 0.92;

}  // namespace clustersim::topologies
