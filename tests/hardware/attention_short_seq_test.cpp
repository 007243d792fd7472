// Below the first measured length of a profile's preferred attention data GPU, the rows of a
// later data GPU that reach down to that length are used, instead of the preferred curve held
// flat (attention rates rise steeply with length: kernels README §1). h100-sxm lists "H200, H100":
// H200's FA2 rows (PyTorch SDPA, 2024) start at 4k, H100's FA2 rows (flash-attention
// assets/flash2_h100_fwd_bwd_benchmark.png, kernel_attention.csv) at 512.
#include <catch2/catch.hpp>

#include "hardware/kernel_cost.hpp"
#include "scenarios/load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

double fwd_bwd_tflops(const hardware::GpuSpec& g, double seq, int head_dim, int heads) {
  hardware::AttentionShape s;
  s.batch = 16384 / seq;  // the figure's setup: batch = 16k / seq, hidden 2048
  s.heads = s.kv_heads = heads;
  s.head_dim_qk = s.head_dim_v = head_dim;
  s.seq_q = s.seq_kv = seq;
  s.causal = true;
  double flop = 0, secs = 0;
  for (auto pass : {hardware::KernelPass::forward, hardware::KernelPass::backward}) {
    flop += hardware::attention_flop(s, pass).si();
    secs += hardware::attention_cost(g, hardware::AttentionImpl::flash2, hardware::Precision::bf16, pass, s).time.si() -
            g.kernel_gap.si();
  }
  return flop / secs / 1e12;
}

}  // namespace

TEST_CASE("short-sequence FA2 on H100 follows the H100 rows instead of the H200 curve held flat", "[hardware][kernels]") {
  auto sc = scenarios::load_scenario_string(
      "model: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
      "<test>");
  sc.gpu.in_step_rate_ratio = 1.0;  // a microbenchmark
  sc.gpu.compute_sustained_fraction = 1.0;
  // Measured FA2 fwd+bwd, causal (kernel_attention.csv): hd 128 163 at 512, 221 at 1k; hd 64 141 at 512.
  CHECK(fwd_bwd_tflops(sc.gpu, 512, 128, 16) == Approx(163).epsilon(0.15));
  CHECK(fwd_bwd_tflops(sc.gpu, 1024, 128, 16) == Approx(221).epsilon(0.15));
  CHECK(fwd_bwd_tflops(sc.gpu, 512, 64, 32) == Approx(141).epsilon(0.15));
  // Inside the H200 rows' range the preferred data GPU still decides.
  CHECK(fwd_bwd_tflops(sc.gpu, 8192, 128, 16) > fwd_bwd_tflops(sc.gpu, 512, 128, 16) * 1.5);
}

}}  // namespace CLUSTERSIM_TEST_ID
