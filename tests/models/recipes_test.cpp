// Training recipes: the training.* recipe keys, low-precision quantization costs, torchao's
// auto-filter, host overhead and CUDA graphs (models/detail/layer_ops_recipe.cpp, layer_ops_host.cpp).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "models/layer_ops.hpp"
#include "models/detail/layer_ops_recipe.hpp"
#include "scenarios/assumptions.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

scenarios::Scenario load(const std::string& hw, const std::string& training, const std::string& model = "llama3-8b",
                         int gpus = 8) {
  return scenarios::load_scenario_string(fmt::format("model: {}\nhardware: {}\ncluster: {{gpus: {}}}\ntraining: {{{}}}\n",
                                                     model, hw, gpus, training),
                                         "<test>");
}

std::string load_error(const std::string& hw, const std::string& training) {
  try {
    load(hw, training);
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

double seconds_of(const models::PassCost& pc, const std::string& suffix) {
  double s = 0;
  for (const auto& op : pc.ops)
    if (op.name.size() >= suffix.size() && op.name.compare(op.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      s += op.time_s;
  return s;
}

bool has_op(const models::PassCost& pc, const std::string& name) {
  for (const auto& op : pc.ops)
    if (op.name == name) return true;
  return false;
}

models::StepCosts costs(const scenarios::Scenario& sc) {
  return models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
}

}  // namespace

TEST_CASE("recipe keys that do not exist together fail naming the key", "[models][recipes]") {
  const std::string base = "seq_len: 4096, global_batch: 8, ";
  CHECK_THAT(load_error("h100-sxm", base + "precision: bf16, fp8_recipe: tensorwise"),
             Catch::Contains("training.fp8_recipe") && Catch::Contains("fp8 only"));
  CHECK_THAT(load_error("h100-sxm", base + "precision: mxfp8, fp8_recipe: delayed"), Catch::Contains("training.fp8_recipe"));
  CHECK_THAT(load_error("h100-sxm", base + "precision: fp8, fp8_recipe: sometimes"), Catch::Contains("training.fp8_recipe"));
  CHECK_THAT(load_error("h100-sxm", base + "precision: mxfp8"), Catch::Contains("training.precision"));
  CHECK_THAT(load_error("a100-80gb", base + "precision: fp8"), Catch::Contains("training.precision"));
  CHECK_THAT(load_error("a100-80gb", base + "attention_impl: flash3"), Catch::Contains("training.attention_impl"));
  CHECK_THAT(load_error("h100-sxm", base + "attention_impl: flash4"), Catch::Contains("training.attention_impl"));
  CHECK_THAT(load_error("h100-sxm", base + "fp8_attention: true"), Catch::Contains("training.fp8_attention"));
  CHECK_THAT(load_error("h100-sxm", base + "precision: fp8, fp8_attention: true, attention_impl: flash2"),
             Catch::Contains("training.fp8_attention"));
  CHECK_THAT(load_error("h100-sxm", base + "flash_attention: false, attention_impl: cudnn"),
             Catch::Contains("training.flash_attention"));
  CHECK_THAT(load_error("h100-sxm", base + "fp8_auto_filter: true"), Catch::Contains("training.fp8_auto_filter"));
  CHECK(load_error("h100-sxm", base + "precision: fp8, fp8_recipe: rowwise, fp8_auto_filter: true, cuda_graphs: true").empty());
}

TEST_CASE("attention_impl: flash1 runs FlashAttention-1's rows: A100 causal hd 64 at 16k 97 against FA2's 171", "[models][recipes]") {
  // kernel_attention.csv, FA2 repo assets/flash2_a100_fwd_bwd_benchmark.png: FA1 97, FA2 171 TFLOP/s.
  const auto fa1 = load("a100-80gb", "seq_len: 16384, global_batch: 8, attention_impl: flash1");
  const auto fa2 = load("a100-80gb", "seq_len: 16384, global_batch: 8, attention_impl: flash2");
  CHECK(fa1.training.attention_impl == hardware::AttentionImpl::flash1);
  hardware::AttentionShape s;
  s.heads = s.kv_heads = 32, s.head_dim_qk = s.head_dim_v = 64, s.seq_q = s.seq_kv = 16384, s.causal = true;
  double t1 = 0, t2 = 0;
  for (auto pass : {hardware::KernelPass::forward, hardware::KernelPass::backward}) {
    t1 += hardware::attention_cost(fa1.gpu, hardware::AttentionImpl::flash1, hardware::Precision::bf16, pass, s).time.si();
    t2 += hardware::attention_cost(fa2.gpu, hardware::AttentionImpl::flash2, hardware::Precision::bf16, pass, s).time.si();
  }
  CHECK(t1 / t2 == Approx(171.0 / 97.0).epsilon(0.02));
  CHECK_THAT(load_error("v100-sxm2", "seq_len: 2048, global_batch: 8, attention_impl: flash1"),
             Catch::Contains("training.attention_impl"));
}

TEST_CASE("flash_attention: false is attention_impl: unfused, and the default is the profile's", "[models][recipes]") {
  const auto a = load("h100-sxm", "seq_len: 2048, global_batch: 8, flash_attention: false");
  const auto b = load("h100-sxm", "seq_len: 2048, global_batch: 8, attention_impl: unfused");
  CHECK(a.training.attention_impl == hardware::AttentionImpl::unfused);
  CHECK(costs(a).layer_fwd.time_s == costs(b).layer_fwd.time_s);
  CHECK(has_op(costs(a).layer_fwd, "softmax"));
  const auto d = load("h100-sxm", "seq_len: 2048, global_batch: 8");
  CHECK(d.training.attention_impl == hardware::default_attention_impl(d.gpu));
  CHECK(d.training.assumed.attention_impl);
  CHECK_FALSE(b.training.assumed.attention_impl);
  // PyTorch's math SDPA adds the causal mask as a kernel of its own.
  const auto m = load("h100-sxm", "seq_len: 2048, global_batch: 8, attention_impl: sdpa_math");
  CHECK(has_op(costs(m).layer_fwd, "attn_mask"));
  CHECK(costs(m).layer_fwd.time_s > costs(b).layer_fwd.time_s);
}

TEST_CASE("torchao's auto-filter decides the README's two example linears as the README does", "[models][recipes]") {
  // torchao float8 README @838e054b 'Performance' (H100, tensorwise, (M, K, N)): 1024,2048,1024
  // "leave this linear in bfloat16" (0.80x); 4096,8192,16384 "enable float8" (1.39x).
  CHECK(models::auto_filter_keeps_bf16(models::Fp8Recipe::tensorwise, 1024, 2048));
  CHECK_FALSE(models::auto_filter_keeps_bf16(models::Fp8Recipe::tensorwise, 16384, 8192));
  CHECK(models::auto_filter_keeps_bf16(models::Fp8Recipe::tensorwise, 4096, 4100));  // K not a multiple of 16
}

TEST_CASE("low precision: casts costed per recipe, GEMMs in FP8, LM head and attention in BF16", "[models][recipes]") {
  const std::string t = "seq_len: 8192, global_batch: 64, precision: fp8, fp8_recipe: ";
  const auto bf16 = costs(load("h100-sxm", "seq_len: 8192, global_batch: 64"));
  const auto delayed = costs(load("h100-sxm", t + "delayed"));
  const auto tensorwise = costs(load("h100-sxm", t + "tensorwise"));
  const auto rowwise = costs(load("h100-sxm", t + "rowwise"));
  CHECK(seconds_of(bf16.layer_fwd, "quantize") == 0);
  CHECK(seconds_of(delayed.layer_fwd, ".quantize") > 0);
  CHECK(seconds_of(delayed.layer_bwd, ".grad_quantize") > 0);
  // Current scaling reads the tensor once more for its amax; rowwise once more again.
  CHECK(seconds_of(tensorwise.layer_fwd, ".quantize") > seconds_of(delayed.layer_fwd, ".quantize"));
  CHECK(seconds_of(rowwise.layer_fwd, ".quantize") > seconds_of(tensorwise.layer_fwd, ".quantize"));
  CHECK(seconds_of(delayed.layer_fwd, "mlp_down") < seconds_of(bf16.layer_fwd, "mlp_down"));
  CHECK_FALSE(has_op(delayed.head_fwd, "lm_head.quantize"));
  CHECK(seconds_of(delayed.layer_fwd, "attention") == seconds_of(bf16.layer_fwd, "attention"));
}

TEST_CASE("TE current scaling launches zero-amax, amax, scale and cast from one quantizer call", "[models][recipes]") {
  const std::string t = "seq_len: 8192, global_batch: 64, precision: fp8, fp8_recipe: ";
  const auto delayed = costs(load("h100-sxm", t + "delayed"));
  const auto current = costs(load("h100-sxm", t + "tensorwise"));
  const models::KernelOp* op = nullptr;
  for (const auto& o : current.layer_fwd.ops)
    if (o.name.size() > 9 && o.name.compare(o.name.size() - 9, 9, ".quantize") == 0 && !op) op = &o;
  REQUIRE(op != nullptr);
  CHECK(op->kernels == 4);
  CHECK(op->loop_launches == 3);  // the C++ side of Float8CurrentScalingQuantizer::quantize_impl
  // Two one-thread kernels cost the latency floor each, on top of the two streaming passes.
  const auto gpu = load("h100-sxm", t + "tensorwise").gpu;
  const models::QuantPass q = models::quant_pass(hardware::Precision::fp8, models::Fp8Recipe::tensorwise);
  const models::QuantPass streaming{q.bytes_per_element, q.kernels, 0};
  const double elements = 1 << 20;
  CHECK((models::quant_time(gpu, q, 1, elements) - models::quant_time(gpu, streaming, 1, elements)).si() ==
        Approx(2 * (gpu.memory_latency + gpu.kernel_gap).si()));
  // Delayed scaling: the scale is known before the cast, one fused kernel.
  for (const auto& o : delayed.layer_fwd.ops)
    if (o.name == op->name) CHECK(o.kernels == 1);
}

TEST_CASE("the auto-filter keeps a small model's linears in BF16", "[models][recipes]") {
  const std::string small = "{layers: 12, hidden: 768, heads: 12, ffn_hidden: 3072, vocab: 50304}";
  const auto on = costs(load("h100-sxm", "seq_len: 2048, global_batch: 8, precision: fp8, fp8_recipe: rowwise, fp8_auto_filter: true", small));
  const auto off = costs(load("h100-sxm", "seq_len: 2048, global_batch: 8, precision: fp8, fp8_recipe: rowwise", small));
  CHECK(seconds_of(on.layer_fwd, "quantize") == 0);
  CHECK(seconds_of(off.layer_fwd, "quantize") > 0);
}

TEST_CASE("a small eager model waits for the host, and CUDA graphs remove the wait and shorten gaps", "[models][recipes]") {
  const std::string tiny = "{layers: 4, hidden: 256, heads: 4, ffn_hidden: 1024, vocab: 8192}";
  const auto eager = load("h100-sxm", "seq_len: 256, global_batch: 8", tiny);
  const auto graphs = load("h100-sxm", "seq_len: 256, global_batch: 8, cuda_graphs: true", tiny);
  CHECK(seconds_of(costs(eager).layer_fwd, "host_launch_wait") > 0);
  CHECK(seconds_of(costs(graphs).layer_fwd, "host_launch_wait") == 0);
  CHECK(scenarios::simulate(graphs).step_time_s < scenarios::simulate(eager).step_time_s);
  // A 7B block's kernels outlast their launches: no wait.
  const auto big = load("h100-sxm", "seq_len: 4096, global_batch: 8", "llama2-7b");
  CHECK_FALSE(has_op(costs(big).layer_fwd, "host_launch_wait"));
  CHECK(costs(big).step_fixed.time_s > 0);
}

TEST_CASE("run reports the defaults it assumed, and not the keys the scenario set", "[models][recipes]") {
  auto keys = [](const scenarios::Scenario& sc) {
    std::vector<std::string> k;
    for (const auto& a : scenarios::assumptions(scenarios::simulate(sc))) k.push_back(a.key);
    return k;
  };
  using Catch::VectorContains;
  const auto plain = keys(load("h100-sxm", "seq_len: 4096, global_batch: 8, precision: fp8"));
  CHECK_THAT(plain, VectorContains(std::string("training.attention_impl")));
  CHECK_THAT(plain, VectorContains(std::string("training.fp8_recipe")));
  CHECK_THAT(plain, VectorContains(std::string("training.cuda_graphs")));
  CHECK_THAT(plain, VectorContains(std::string("hardware.host_launch")));
  const auto set = keys(load("h100-sxm", "seq_len: 4096, global_batch: 8, precision: fp8, fp8_recipe: delayed, "
                                         "attention_impl: cudnn, cuda_graphs: false"));
  CHECK_FALSE(std::count(set.begin(), set.end(), "training.attention_impl"));
  CHECK_FALSE(std::count(set.begin(), set.end(), "training.fp8_recipe"));
  CHECK_FALSE(std::count(set.begin(), set.end(), "training.cuda_graphs"));
}

namespace {
// Transformer Engine's GEMM-profiling tutorial model (gemm_profiling.rst @d0067d0d, via
// reference/kernels/fp8_speedups.csv): hidden 4096, ffn 16384, 24 layers, M = 15872 tokens, the
// weights quantized on every call (autocast, one micro-batch). Seconds of its linears (GEMMs and
// their quantization) per step, and of the quantization alone.
struct LinearTime {
  double total = 0, quantize = 0;
};
LinearTime te_tutorial_linears(const std::string& hw, const std::string& precision) {
  const auto sc = load(hw, "seq_len: 512, global_batch: 31, micro_batch: 31, " + precision,
                       "{layers: 24, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000, activation: gelu}", 1);
  const auto c = costs(sc);
  LinearTime t;
  for (const auto* pass : {&c.layer_fwd, &c.layer_bwd})
    for (const auto& op : pass->ops) {
      const bool quant = op.name.find("quantize") != std::string::npos;
      if (op.kind == models::OpKind::gemm || quant) t.total += 24 * op.time_s;
      if (quant) t.quantize += 24 * op.time_s;
    }
  return t;
}
}  // namespace

TEST_CASE("FP8 recipes on the TE tutorial model: cast share and GEMM speed-ups against the measured ones", "[models][recipes]") {
  const auto bf16 = te_tutorial_linears("h200-sxm", "precision: bf16");
  const auto current = te_tutorial_linears("h200-sxm", "precision: fp8, fp8_recipe: tensorwise");
  const auto delayed = te_tutorial_linears("h200-sxm", "precision: fp8, fp8_recipe: delayed");
  const auto block = te_tutorial_linears("h200-sxm", "precision: fp8, fp8_recipe: blockwise");
  INFO("bf16 " << bf16.total << " s; current " << current.total << " (quantize " << current.quantize << "); delayed "
               << delayed.total << "; blockwise " << block.total);
  // H200 NVL, measured (ms of all 12 linear GEMMs x 24 layers, autocast): BF16 768.3; FP8 current
  // scaling 486.9 of which ~17 % quantization (pre-quantized 402.8); delayed 455.5; block 549.2.
  // Known gap (docs/recipes.md): the modelled casts (amax read + cast-transpose, 6 B per element)
  // are about half of the measured autocast overhead, which also holds TE's per-call host work.
  const double measured_share = (486.851 - 402.838) / 486.851;
  CHECK(current.quantize / current.total > 0.4 * measured_share);
  CHECK(current.quantize / current.total < measured_share);
  CHECK(bf16.total / current.total == Approx(768.335 / 486.851).epsilon(0.15));
  CHECK(bf16.total / delayed.total == Approx(768.335 / 455.473).epsilon(0.15));
  CHECK(delayed.total < current.total);
}

TEST_CASE("Blackwell recipes on the TE tutorial model: FP8, MXFP8 and NVFP4 speed-ups against the measured ones", "[models][recipes]") {
  const auto bf16 = te_tutorial_linears("b300", "precision: bf16");
  const auto current = te_tutorial_linears("b300", "precision: fp8, fp8_recipe: tensorwise");
  const auto delayed = te_tutorial_linears("b300", "precision: fp8, fp8_recipe: delayed");
  const auto mx = te_tutorial_linears("b300", "precision: mxfp8");
  const auto nv = te_tutorial_linears("b300", "precision: nvfp4");
  INFO("bf16 " << bf16.total << " s; current " << current.total << " (quantize " << current.quantize << "); delayed "
               << delayed.total << "; mxfp8 " << mx.total << " (quantize " << mx.quantize << "); nvfp4 " << nv.total
               << " (quantize " << nv.quantize << ")");
  // B300 SXM6 AC, measured (fp8_speedups.csv, ms of all 12 linear GEMMs x 24 layers, autocast =
  // quantization included): BF16 306.2; FP8 delayed 187.2, current 219.5; MXFP8 215.6; NVFP4 154.9
  // (pre-quantized, kernels only: BF16 314.4, NVFP4 90.3).
  CHECK(bf16.total / delayed.total == Approx(306.192 / 187.246).epsilon(0.15));
  CHECK(bf16.total / current.total == Approx(306.192 / 219.522).epsilon(0.15));
  CHECK(bf16.total / mx.total == Approx(306.192 / 215.608).epsilon(0.15));
  // The NVFP4 GEMMs alone: b300's NVFP4 anchor is this tutorial's NVFP4/BF16 ratio, so this
  // checks the anchor's placement, not an independent measurement.
  CHECK(bf16.total / (nv.total - nv.quantize) == Approx(314.445 / 90.337).epsilon(0.15));
  // Known gap (docs/recipes.md): NVFP4's quantization (amax with the random Hadamard transform,
  // then the fused row-wise + RHT column-wise cast: 2 + 2 + 2o bytes per element, as TE's
  // NVFP4Quantizer runs it) is modelled at streaming bandwidth, ~8 % of the BF16 time, where the
  // tutorial measures 64.5 ms (21 %): the autocast speed-up comes out >15 % too high. This check
  // fails when the gap closes, so that the note goes with it.
  CHECK(bf16.total / nv.total > 1.15 * (306.192 / 154.869));
}

}}  // namespace CLUSTERSIM_TEST_ID
