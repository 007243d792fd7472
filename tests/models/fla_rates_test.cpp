// The gated-delta-rule scan against flash-linear-attention's measured kernel times on H200
// (hardware/kernels/fla_gdn.csv: fla 0.5.1 chunk_gated_delta_rule_fwd / _bwd, head_dim 128,
// CUDA-graph replay, from QwenLM/FlashQLA's benchmark table). The model's scan kernels of the
// benchmarked calls (the gate cumsum, A = KKᵀ, its triangular solve, W/U, the chunk-state pass and
// the output; the backward's eight) are summed per row; the l2 norms and the gated norm sit outside
// those calls. One constant is fitted on 7 of these rows (below); the rest are out of sample.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hardware/csv.hpp"
#include "models/linear_attention_ops.hpp"
#include "scenarios/load_model.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

struct Row {
  std::string gpu;
  bool backward;
  int key_heads, value_heads, sequences, tokens;
  double measured_ms;
  std::string config;
};

std::vector<Row> rows() {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/hardware/kernels/fla_gdn.csv");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<Row> out;
  const auto records = hardware::parse_csv_records(text.str(), "fla_gdn.csv");
  for (const auto& r : records) {
    if (r.empty() || r[0].rfind("#", 0) == 0 || r[0] == "gpu") continue;  // the source line, the header
    out.push_back({r[0], r[1] == "bwd", std::stoi(r[2]), std::stoi(r[3]), std::stoi(r[4]), std::stoi(r[5]), std::stod(r[6]), r[7]});
  }
  return out;
}

bool in_benchmark(const std::string& name) {
  for (const char* outside : {"qk_l2norm", "gated_norm"})
    if (name.find(outside) != std::string::npos) return false;
  return true;
}

// The model's time of the benchmarked calls for one row, in ms.
double predicted_ms(const Row& row) {
  auto m = scenarios::model_preset("qwen3-next-80b-a3b");
  m.linear_attention.heads = row.value_heads;
  m.linear_attention.key_heads = row.key_heads;
  m.linear_attention.head_dim = m.linear_attention.value_head_dim = 128;
  m.linear_attention.chunk = 64;  // fla's chunk size for the gated delta rule
  models::TrainingSpec t;
  t.seq_len = row.tokens, t.micro_batch = row.sequences, t.precision = hardware::Precision::bf16;
  const auto gpu = scenarios::load_scenario_string("name: t\nmodel: qwen3-next-80b-a3b\nhardware: " + row.gpu + "\ncluster: {gpus: 8}\n"
                                                   "parallelism: {ep: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
                                                   "m.yaml")
                       .gpu;
  const models::MambaOps o = models::linear_attention_ops(m, t, models::ParallelSpec{}, gpu);
  double s = 0;
  for (const auto& op : (row.backward ? o.core_bwd : o.core_fwd).ops)
    if (in_benchmark(op.name)) s += op.time_s;
  return 1e3 * s;
}

}  // namespace

TEST_CASE("fla gated-delta-rule scan: predicted against measured kernel times on H200", "[models][linear][fla]") {
  // The chunk-state passes' step latency (linear_attention_ops.cpp kStateStepLatency) is fitted on
  // the forward rows with 8 value heads; every other row is out of sample.
  std::vector<double> fwd, bwd, gb200_fwd, gb200_bwd;
  std::printf("fla chunk_gated_delta_rule on H200 (hardware/kernels/fla_gdn.csv): predicted / measured\n");
  for (const Row& r : rows()) {
    const double ratio = predicted_ms(r) / r.measured_ms;
    std::printf("  %-8s %s hk%-2d hv%-2d %dx%-6d measured %6.3f ms  predicted %6.3f ms  %+6.1f %%%s\n", r.gpu.c_str(), r.backward ? "bwd" : "fwd",
                r.key_heads, r.value_heads, r.sequences, r.tokens, r.measured_ms, predicted_ms(r), 100 * (ratio - 1),
                r.gpu == "h200-sxm" && !r.backward && r.value_heads == 8 ? "  (fitted)" : "");
    if (r.gpu == "h200-sxm" && !r.backward && r.value_heads == 8) continue;
    if (r.gpu == "h200-sxm") (r.backward ? bwd : fwd).push_back(ratio);
    else (r.backward ? gb200_bwd : gb200_fwd).push_back(ratio);
  }
  auto geomean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return std::exp(s / double(v.size()));
  };
  REQUIRE(fwd.size() == 49);
  REQUIRE(bwd.size() == 8);
  std::printf("  out of sample: forward geometric mean %.3f over %zu rows, backward %.3f over %zu rows\n", geomean(fwd),
              fwd.size(), geomean(bwd), bwd.size());
  // Measured 2026-12-05: forward 0.92 (rows −19 % .. +2 %), backward 0.84 (−23 % .. −10 %; the
  // backward's kernels other than the two state passes run below their roofline estimate).
  CHECK(geomean(fwd) == Approx(1.0).epsilon(0.10));
  for (double x : fwd) CHECK(x == Approx(1.0).epsilon(0.20));
  CHECK(geomean(bwd) == Approx(1.0).epsilon(0.20));
  for (double x : bwd) CHECK(x == Approx(1.0).epsilon(0.25));
  // GB200, nothing fitted there: its Tensor-Core work at FlashAttention-2's Blackwell share of the
  // peak (hardware::warp_mma_slowdown, 1.9x the GEMM model's time). Measured 2026-12-05: forward
  // 0.80 (rows -33 % .. -9 %), backward 0.75 (-30 % .. -21 %), a listed gap: fla on GB200 runs at
  // about H200's speed, and what still holds its memory-bound kernels there is not measured.
  REQUIRE(gb200_fwd.size() == 56);
  REQUIRE(gb200_bwd.size() == 8);
  std::printf("  GB200 (out of sample): forward geometric mean %.3f over %zu rows, backward %.3f over %zu rows\n",
              geomean(gb200_fwd), gb200_fwd.size(), geomean(gb200_bwd), gb200_bwd.size());
  CHECK(geomean(gb200_fwd) == Approx(1.0).epsilon(0.25));
  CHECK(geomean(gb200_bwd) == Approx(1.0).epsilon(0.30));
  for (double x : gb200_fwd) CHECK(x == Approx(1.0).epsilon(0.35));
}

}}  // namespace CLUSTERSIM_TEST_ID
