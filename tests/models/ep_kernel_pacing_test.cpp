// DeepEP's and HybridEP's exchanges inside one NVLink domain run at no more than their kernels'
// measured rate (models/moe_exchanges.hpp, hardware/kernels/ep_kernels.csv), which the SMs given
// to them set; across domains RDMA bounds them and the links alone price them.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "models/moe_exchanges.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "scenarios/topology_load.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

// Qwen3-235B's MoE layer (128 experts, top-8, hidden 4096) at micro-batch 1 of 4,096 tokens.
scenarios::Scenario qwen3(const std::string& hardware, int gpus, int ep, const std::string& training) {
  return scenarios::load_scenario_string(fmt::format(R"(
model: qwen3-235b-a22b
hardware: {}
cluster: {{gpus: {}}}
parallelism: {{ep: {}, zero_stage: 1, pp: 4}}
training: {{seq_len: 4096, global_batch: 256, micro_batch: 1, precision: bf16, moe_load_imbalance: 1.0{}}}
)",
                                                     hardware, gpus, ep, training),
                                         "<test>");
}

struct Exchanges {
  models::RoutedExchanges paced, links;
  double received_bytes = 0;  ///< the rows one rank receives in a dispatch, BF16
};

Exchanges exchanges_of(const scenarios::Scenario& sc) {
  const topologies::Network net = scenarios::network_of(sc);
  const auto ops = models::moe_layer_ops(sc.model, sc.training, sc.parallel, models::expert_parallel(sc.parallel),
                                         sc.gpu, sc.training.moe_load_imbalance);
  hardware::GpuSpec links_only = sc.gpu;
  links_only.ep_kernel_data.clear();
  Exchanges e{models::routed_exchanges(sc.model, sc.training, sc.parallel, ops, sc.gpu, net),
              models::routed_exchanges(sc.model, sc.training, sc.parallel, ops, links_only, net)};
  // One row per (token, rank hosting one of its experts), counted on routing drawn at random
  // (each token's top_k distinct experts; experts / ep on each rank), not from the model's formula.
  std::mt19937 rng(11);
  std::vector<int> ids(static_cast<std::size_t>(sc.model.moe.experts));
  std::iota(ids.begin(), ids.end(), 0);
  const int per_rank = sc.model.moe.experts / sc.parallel.ep, tokens = 20000;
  double rows = 0;
  for (int token = 0; token < tokens; ++token) {
    std::shuffle(ids.begin(), ids.end(), rng);
    std::set<int> ranks;
    for (int j = 0; j < sc.model.moe.top_k; ++j) ranks.insert(ids[std::size_t(j)] / per_rank);
    rows += double(ranks.size());
  }
  e.received_bytes = ops.tokens * rows / tokens * sc.model.hidden * 2;
  return e;
}

TEST_CASE("DeepEP inside one NVL72 domain runs at its measured kernel rate, not the links'", "[models][moe]") {
  // EP32 in one 64-GPU GB200 rack. DeepEP on 24 SMs: its combine moves 164 GB/s at 24 ranks and
  // beyond (DeepEP's GB200 table), far below what NCCL's all-to-all gets on NVLink 5.
  const auto sc = qwen3("gb200", 128, 32, ", moe_dispatcher: deepep, moe_dispatcher_sms: 24");
  const Exchanges e = exchanges_of(sc);
  CHECK(e.links.combine.time.si() < e.paced.combine.time.si());
  CHECK(e.paced.combine.time.si() == Approx(e.received_bytes / 163.62e9).epsilon(0.01));
  // The same bytes over the longer time: each link is held at a lower rate.
  const auto& phase = e.paced.combine.phases.front();
  const auto& link_phase = e.links.combine.phases.front();
  double paced_load = 0, link_load = 0;
  for (std::size_t i = 0; i < phase.demand.size(); ++i)
    paced_load += phase.demand[i] * phase.time.si(), link_load += link_phase.demand[i] * link_phase.time.si();
  CHECK(paced_load == Approx(link_load));
  // HybridEP on its default 32 SMs moves the combine at 465 GB/s there: under half DeepEP's time.
  const Exchanges h = exchanges_of(qwen3("gb200", 128, 32, ", moe_dispatcher: hybridep"));
  CHECK(h.paced.combine.time.si() < 0.5 * e.paced.combine.time.si());
}

TEST_CASE("More SMs for DeepEP move its tokens faster inside a node, and across nodes the links set the pace",
          "[models][moe]") {
  // One DGX B200 (EP8): DeepEP's BF16 dispatch 348 GB/s on 16 SMs, 619 on 32 (B200 table).
  const Exchanges few = exchanges_of(qwen3("b200", 32, 8, ", moe_dispatcher: deepep, moe_dispatcher_sms: 16"));
  const Exchanges many = exchanges_of(qwen3("b200", 32, 8, ", moe_dispatcher: deepep, moe_dispatcher_sms: 32"));
  CHECK(many.paced.combine_grad.time.si() < few.paced.combine_grad.time.si());
  CHECK(few.paced.combine_grad.time.si() / many.paced.combine_grad.time.si() == Approx(619.0 / 348.0).epsilon(0.02));
  // EP32 over four DGX B200: RDMA between the nodes bounds it, the SMs do not enter the rate.
  const Exchanges wide16 = exchanges_of(qwen3("b200", 128, 32, ", moe_dispatcher: deepep, moe_dispatcher_sms: 16"));
  const Exchanges wide32 = exchanges_of(qwen3("b200", 128, 32, ", moe_dispatcher: deepep, moe_dispatcher_sms: 32"));
  CHECK(wide16.paced.combine.time.si() == wide16.links.combine.time.si());
  CHECK(wide16.paced.combine.time.si() == wide32.paced.combine.time.si());
  // NCCL's all-to-all takes the profile's comm SMs: moe_dispatcher_sms is refused for it.
  CHECK_THROWS_WITH(qwen3("b200", 32, 8, ", moe_dispatcher: alltoall, moe_dispatcher_sms: 16"),
                    Catch::Contains("moe_dispatcher_sms") && Catch::Contains("deepep or hybridep"));
}

TEST_CASE("moe_dispatcher hybridep defaults to HybridEP's own 32 SMs, deepep to DeepEP's 20", "[scenarios][moe]") {
  CHECK(qwen3("b200", 32, 8, ", moe_dispatcher: hybridep").training.moe_dispatcher_sms == 32);
  CHECK(qwen3("b200", 32, 8, ", moe_dispatcher: deepep").training.moe_dispatcher_sms == 20);
  CHECK(qwen3("b200", 32, 8, ", moe_dispatcher: hybridep, moe_dispatcher_sms: 16").training.moe_dispatcher_sms == 16);
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
