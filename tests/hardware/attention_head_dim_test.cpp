// A narrow head (64) runs well below a 128-wide one on Blackwell: the exponential unit, not the
// Tensor Cores, bounds it. GB200 and B200 have no 64-wide rows of their own, so the ratio comes
// from the Blackwell FA4 rows of the same die (hardware/kernels/attention.csv, Blackwell-2.5PF).
// It is checked against the cuDNN rows, which the ratio does not use: cuDNN causal forward at
// 4,096 tokens, 977 TFLOP/s at head width 64 (Blackwell-2.5PF) and 1,408 at 128 (GB200).
#include <catch2/catch.hpp>

#include <string>

#include "hardware/kernel_cost.hpp"
#include "scenarios/load.hpp"
#include "support/scenario_fixture.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

double cudnn_tflops(const hardware::GpuSpec& g, hardware::KernelPass pass, int head_dim) {
  hardware::AttentionShape s;
  s.batch = 2;
  s.heads = s.kv_heads = 8192 / head_dim;
  s.head_dim_qk = s.head_dim_v = head_dim;
  s.seq_q = s.seq_kv = 4096;
  s.causal = true;
  const auto cost = hardware::attention_cost(g, hardware::AttentionImpl::cudnn, hardware::Precision::bf16, pass, s);
  return hardware::attention_flop(s, pass).si() / (cost.time.si() - g.kernel_gap.si()) / 1e12;
}

}  // namespace

TEST_CASE("head width 64 on Blackwell runs at the measured fraction of width 128", "[hardware][attention]") {
  constexpr double kMeasured = 977.0 / 1408.0;  // cuDNN causal fwd, 4k (see the header)
  for (const char* hw : {"gb200", "b200"}) {
    const hardware::GpuSpec g = testing::gpu_profile(hw);
    const double fwd =
        cudnn_tflops(g, hardware::KernelPass::forward, 64) / cudnn_tflops(g, hardware::KernelPass::forward, 128);
    INFO(hw << ": hd 64 / hd 128 forward " << fwd);
    CHECK(fwd == Approx(kMeasured).epsilon(0.1));
    // No Blackwell backward row at width 64 exists: the forward ratio stands in for it (Hopper's
    // backward loses less, 0.84 against 0.70), so the backward is never cut more than the forward.
    const double bwd =
        cudnn_tflops(g, hardware::KernelPass::backward, 64) / cudnn_tflops(g, hardware::KernelPass::backward, 128);
    CHECK(bwd < 0.8);
    CHECK(bwd >= fwd * 0.99);
  }
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
