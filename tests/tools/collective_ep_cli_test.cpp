// `clustersim collective` over the expert groups (--ep, --etp; groups ep, etp, edp): the same
// EP all-to-all the step model charges a scenario's token exchange, NVLink vs InfiniBand within
// what the topologies' own link rates allow, and exit-2 errors for inconsistent layouts.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/moe_ops.hpp"
#include "models/step_program_moe.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "scenarios/topology_load.hpp"
#include "support/json_fixture.hpp"
#include "support/scenario_fixture.hpp"
#include "topologies/network.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using clustersim::testing::json_number;
using clustersim::testing::json_text;
using clustersim::testing::run_command;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;
const std::string kSrc = CLUSTERSIM_SOURCE_DIR;

// One row of `collective ... --json` for one size.
std::string collective_row(const std::string& args) {
  const auto r = run_command(kBin + " collective " + args + " --json 2>&1");
  INFO(args << "\n" << r.out);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

// A shipped MoE scenario's expert exchange as the step model prices it, and the CLI flags that
// describe its parallelism (everything but the topology and the size).
struct StepExchange {
  scenarios::Scenario sc;
  models::RoutedExchanges x;      ///< on the links alone
  models::RoutedExchanges paced;  ///< as the step model runs it: DeepEP / HybridEP at their kernels' rate
  double bytes = 0;  ///< the combine's bytes before any de-duplication: k·h per routed token, busiest rank
  std::string layout_args;
  double dedup = 1;  ///< DeepEP's node de-duplication on the scenario's network
  double plain_all_to_all_s = 0;  ///< the network's all-to-all of `bytes` over the EP group
};

StepExchange step_exchange(const std::string& file) {
  StepExchange e;
  e.sc = scenarios::load_scenario_file(kSrc + "/scenarios/" + file);
  const auto& sc = e.sc;
  const auto& p = sc.parallel;
  REQUIRE(p.ep > 1);
  const topologies::Network net = scenarios::network_of(sc);
  const auto ops = models::moe_layer_ops(sc.model, sc.training, p, models::expert_parallel(p), sc.gpu,
                                         sc.training.moe_load_imbalance);
  // The links alone, as the CLI prices them (no GPU, so no measured DeepEP / HybridEP kernel rate).
  hardware::GpuSpec links_only = sc.gpu;
  links_only.ep_kernel_data.clear();
  e.x = models::routed_exchanges(sc.model, sc.training, p, ops, links_only, net);
  e.paced = models::routed_exchanges(sc.model, sc.training, p, ops, sc.gpu, net);
  e.bytes = ops.tokens * ops.load_imbalance * sc.model.moe.top_k * sc.model.hidden *
            hardware::storage_bytes(sc.training.precision);
  const auto& order = sc.network.placement;
  e.layout_args = fmt::format("--gpus {} --tp {} --cp {} --pp {} --ep {} --etp {} --placement {},{},{},{}", sc.cluster.gpus,
                              p.tp, p.cp, p.pp, p.ep, p.etp, topologies::name(order[0]), topologies::name(order[1]),
                              topologies::name(order[2]), topologies::name(order[3]));
  e.dedup = models::deepep_node_dedup(sc.model.moe, net);
  e.plain_all_to_all_s =
      net.cost(topologies::Collective::all_to_all, topologies::GroupDim::ep, units::Bytes(e.bytes)).time.si();
  return e;
}

// E[distinct other ranks a token reaches] / E[copies it sends to other ranks] from 20,000 tokens
// routed uniformly at random (top_k distinct experts, `experts` / `ranks` on each rank, seen from rank 0).
double sampled_rank_dedup(int experts, int top_k, int ranks) {
  std::mt19937 rng(7);
  std::vector<int> ids(static_cast<std::size_t>(experts));
  std::iota(ids.begin(), ids.end(), 0);
  double distinct = 0, copies = 0;
  for (int token = 0; token < 20000; ++token) {
    std::shuffle(ids.begin(), ids.end(), rng);
    std::set<int> other;
    for (int j = 0; j < top_k; ++j)
      if (const int r = ids[std::size_t(j)] / (experts / ranks); r != 0) other.insert(r), ++copies;
    distinct += double(other.size());
  }
  return distinct / copies;
}

}  // namespace

TEST_CASE("collective --group ep times the all-to-all the step model charges for a scenario's token combine",
          "[tools][moe][network]") {
  // Two shipped MoE scenarios: GPT-OSS-120B EP64 over 8 DGX H100 (InfiniBand between them), and
  // Qwen3-235B EP32 inside 64-GPU GB200 NVL72 racks. The scenario loader builds the network
  // and the step model prices the combine (k·h bf16 per routed token, busiest rank); the CLI is
  // given the same parallelism as flags and the same bytes.
  struct Case {
    std::string file, topology;
  };
  for (const Case& c : {Case{"gpt_oss_120b_64xh100.yaml", "--topology dgx-h100"},
                        Case{"qwen3_235b_256xgb200.yaml", "--topology gb200-nvl72 --gpus-per-node 64"}}) {
    INFO(c.file);
    const StepExchange e = step_exchange(c.file);
    const auto& sc = e.sc;
    const auto& p = sc.parallel;
    const std::string row = collective_row(
        fmt::format("{} {} --group ep --op all_to_all --size {:.17g}B", c.topology, e.layout_args, e.bytes));
    CHECK(json_text(row, "topology") == sc.network.topology.name);  // the same network
    CHECK(json_number(row, "ranks") == p.ep);
    CHECK(json_number(row, "edp") == p.edp());
    if (!models::uses_ep_kernels(sc.training.moe_dispatcher)) {
      CHECK(json_number(row, "time_s") == Approx(e.x.combine.time.si()).epsilon(1e-6));
    } else {  // the kernels send fewer bytes, at no more than their measured rate
      CHECK(e.x.combine.time.si() < json_number(row, "time_s"));
      CHECK(e.paced.combine.time.si() >= e.x.combine.time.si());
    }
    CHECK(json_number(row, "time_s") == Approx(e.plain_all_to_all_s).epsilon(1e-6));
  }
}

TEST_CASE("collective: EP64 all-to-all inside an NVL72 rack beats 8 DGX H100 over InfiniBand, within their link rates",
          "[tools][moe][network]") {
  const double S = 1024.0 * 1024 * 1024;
  const std::string a2a = " --gpus 256 --ep 64 --group ep --op all_to_all --size 1GiB";
  const std::string nvl = collective_row("--topology gb200-nvl72 --gpus-per-node 64" + a2a);
  const std::string ib = collective_row("--topology dgx-h100" + a2a);
  CHECK(json_number(nvl, "group_nodes") == 1);
  CHECK(json_number(ib, "group_nodes") == 8);
  // DGX H100: of the (n−1)/n·S a GPU sends, (n−8)/n·S leaves its node through its one NIC, so
  // busbw = S/t·(n−1)/n is at most the NIC's rate · (n−1)/(n−8); at 1 GiB the NIC is what limits.
  const auto h100 = scenarios::topology_preset("dgx-h100");
  const double nic = h100.nic_bandwidth.si() * h100.nic_efficiency * h100.nics_per_node / h100.gpus_per_node;
  const double n = 64, ib_bound = nic * (n - 1) / (n - h100.gpus_per_node);
  CHECK(json_number(ib, "busbw_bytes_per_s") <= ib_bound * 1.0001);
  CHECK(json_number(ib, "busbw_bytes_per_s") > 0.8 * ib_bound);
  CHECK(json_number(ib, "time_s") >= S * (n - h100.gpus_per_node) / n / nic * 0.9999);
  // NVL72: every peer is on NVLink, at most its per-GPU rate.
  const auto gb200 = scenarios::topology_preset("gb200-nvl72");
  const double nvlink = gb200.nvlink_bandwidth.si() * gb200.nvlink_efficiency;
  CHECK(json_number(nvl, "busbw_bytes_per_s") <= nvlink * 1.0001);
  CHECK(json_number(nvl, "busbw_bytes_per_s") > 0.8 * nvlink);
  CHECK(json_number(nvl, "time_s") * 5 < json_number(ib, "time_s"));
  // All 72 GPUs of each rack: the second EP group straddles two racks and runs at InfiniBand speed.
  const std::string full = collective_row("--topology gb200-nvl72" + a2a);
  CHECK(json_number(full, "group_nodes") == 2);
  CHECK(json_number(full, "time_s") > 5 * json_number(nvl, "time_s"));
}

TEST_CASE("collective: the expert groups are the fold of the stage's ranks (etp = tp groups, edp over the rest)",
          "[tools][moe][network]") {
  // tp 4 on 64 H100: etp defaults to tp, so the ETP groups are the TP groups.
  const std::string base = "--topology dgx-h100 --gpus 64 --tp 4 --op all_gather --size 64MiB";
  const std::string tp = collective_row(base + " --group tp");
  const std::string etp = collective_row(base + " --ep 8 --group etp");
  CHECK(json_number(etp, "ranks") == 4);
  CHECK(json_number(etp, "time_s") == json_number(tp, "time_s"));
  // etp 1 x ep 8 x edp 8 over tp 4 x dp 16: an EDP group strides over 8 ranks, one GPU per node.
  const std::string edp = collective_row("--topology dgx-h100 --gpus 64 --tp 4 --ep 8 --etp 1 --group edp --op all_reduce --size 64MiB");
  CHECK(json_number(edp, "ranks") == 8);
  CHECK(json_number(edp, "group_nodes") == 8);
  // The dense dimensions' rows do not grow the expert keys.
  CHECK(tp.find("\"ep\"") == std::string::npos);
}

TEST_CASE("collective: an inconsistent expert layout is a one-line exit-2 error naming the option", "[tools][moe]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--gpus 256 --ep 48 --group ep", "--ep 48 --etp 1: etp·ep = 1·48 = 48 must divide tp·cp·dp = 256"},
      {"--gpus 256 --tp 8 --ep 64 --group ep", "with etp 8, ep may be 1, 2, 4"},
      {"--gpus 256 --group ep", "--group ep: the expert groups (ep, etp, edp) need an expert layout, --ep N"},
      {"--gpus 256 --group edp", "--group edp"},
      {"--gpus 256 --etp 2", "--etp 2: needs --ep N"},
      {"--gpus 100", "--gpus 100: not whole nodes of dgx-h100; use a multiple of 8"},
      {"--gpus 64 --gpus-per-node 3", "--gpus-per-node 3: does not fit dgx-h100's 8-GPU node"},
      {"--nodes 2 --gpus 16", "--nodes excludes --gpus"},
      {"--gpus 64 --group xp", "--group: xp not in {tp,cp,pp,dp,ep,etp,edp}"},
      {"--gpus 64 --placement tp,dp,dp,pp", "--placement tp,dp,dp,pp: expected tp, cp, pp and dp once each"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const auto r = run_command(kBin + " collective --topology dgx-h100 --op all_to_all --size 1GB " + args + " 2>&1");
    CHECK(r.exit_code == 2);
    CHECK(r.out.find(message) != std::string::npos);
    CHECK(r.out.rfind("error: ", 0) == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  }
}

TEST_CASE("collective --dispatcher deepep times the node-deduplicated all-to-all the step model charges a DeepEP scenario",
          "[tools][moe][network]") {
  // DeepSeek-V3 on 1,024 H100 with training.moe_dispatcher: deepep, EP64 over 8 DGX H100 nodes.
  const StepExchange e = step_exchange("deepseek_v3_1024xh100.yaml");
  const auto& sc = e.sc;
  REQUIRE(sc.training.moe_dispatcher == models::MoeDispatcher::deepep);
  const std::string args = fmt::format("--topology {} {} --group ep --op all_to_all --size {:.17g}B",
                                       sc.network.topology.name, e.layout_args, e.bytes);
  const std::string deepep = collective_row(
      args + fmt::format(" --dispatcher deepep --experts {} --top-k {} --router-groups {} --router-group-top-k {}",
                         sc.model.moe.experts, sc.model.moe.top_k, sc.model.moe.router_groups,
                         sc.model.moe.router_group_top_k));
  const std::string plain = collective_row(args + " --dispatcher alltoall");
  CHECK(json_number(deepep, "group_nodes") == 8);
  CHECK(json_number(deepep, "size_bytes") == Approx(e.bytes));
  CHECK(json_number(deepep, "time_s") == Approx(e.x.combine.time.si()).epsilon(1e-6));
  CHECK(json_number(deepep, "dedup") == Approx(e.dedup));
  // docs/moe.md: 4 of 8 nodes per token for DeepSeek-V3's node-limited routing (0.66 without it).
  CHECK(e.dedup == Approx(0.5).margin(0.01));
  // Fewer bytes than a plain all-to-all of the same tokens (which adds no dispatcher keys).
  CHECK(json_number(deepep, "time_s") < 0.8 * json_number(plain, "time_s"));
  CHECK(plain.find("dedup") == std::string::npos);
  // Within one node a token goes once to each rank hosting one of its experts (DeepEP's
  // is_token_in_rank). Checked against routing drawn at random: 256 experts, top-8, 8 ranks.
  const std::string one_node = "--topology dgx-h100 --gpus 8 --ep 8 --group ep --op all_to_all --size 64MiB";
  const std::string rank_dedup = collective_row(one_node + " --dispatcher deepep --experts 256 --top-k 8");
  CHECK(json_number(rank_dedup, "group_nodes") == 1);
  CHECK(json_number(rank_dedup, "dedup") == Approx(sampled_rank_dedup(256, 8, 8)).epsilon(0.01));
  CHECK(json_number(rank_dedup, "time_s") < json_number(collective_row(one_node), "time_s"));
}

TEST_CASE("collective: a bad --dispatcher request is a one-line exit-2 error naming the option", "[tools][moe]") {
  const std::string ep = "--gpus 256 --ep 64 --group ep ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {ep + "--dispatcher deepep",
       "--dispatcher deepep: needs the model's routed experts and experts per token, --experts N --top-k K"},
      {ep + "--dispatcher deepep --experts 256", "--experts N --top-k K"},
      {ep + "--experts 256 --top-k 8", "--experts: only --dispatcher deepep or hybridep uses it"},
      {ep + "--top-k 8", "--top-k: only --dispatcher deepep or hybridep uses it"},
      {"--gpus 256 --ep 64 --group dp --dispatcher deepep --experts 256 --top-k 8",
       "--dispatcher deepep: prices the EP token exchange, --op all_to_all --group ep (here --op all_to_all --group "
       "dp)"},
      {ep + "--dispatcher deepep --experts 96 --top-k 8",
       "--experts 96: ep = 64 must divide the model's 96 routed experts"},
      {ep + "--dispatcher deepep --experts 256 --top-k 300",
       "--top-k 300: a token picks at most the 256 routed experts"},
      {ep + "--dispatcher allgather",
       "--dispatcher allgather: it is an all-gather over the EP group; use --op all_gather"},
      {ep + "--dispatcher nccl", "--dispatcher: nccl not in {alltoall,allgather,deepep,hybridep}"},
      {ep + "--dispatcher deepep --experts 0 --top-k 8", "--experts"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const auto r = run_command(kBin + " collective --topology dgx-h100 --op all_to_all --size 1GB " + args + " 2>&1");
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find(message) != std::string::npos);
    CHECK(r.out.rfind("error: ", 0) == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
