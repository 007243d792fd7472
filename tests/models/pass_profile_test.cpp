// A pass's merged profile is the sum of its units' profiles, each simulated alone
// (models/detail/step_merge.cpp PassMerger::pass). Units run back to back, so the sum must add
// what running them in one graph adds: the EP stream in order (a unit's first exchange waits for
// the previous unit's tail) and the SMs a tail's exchange kernels hold beside the next unit's
// kernels. The check: the summed profile against the whole pass simulated at kernel level in one
// graph (the same units, the same emit_unit_body as --trace).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/detail/step_attribution.hpp"
#include "models/detail/step_merge.hpp"
#include "models/step_program_moe.hpp"
#include "scenarios/simulate.hpp"
#include "sim/runner.hpp"
#include "support/scenario_fixture.hpp"
#include "topologies/network.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

struct Compared {
  models::PassProfile summed, whole;
};

// Pass `kind` of the first `n` MoE blocks of `sc`, summed by the merger and run whole.
Compared pass_of(const scenarios::Scenario& sc, models::PassKind kind, int n, bool alone) {
  const topologies::Network net(sc.network.topology, topologies::Network::nodes_for(sc.network.topology, sc.cluster.gpus),
                                {sc.parallel.sizes(), sc.network.placement});
  const auto costs = scenarios::step_costs_of(sc);
  const models::BlockProgram prog = models::block_program(sc.model, sc.training, sc.parallel, sc.gpu, costs, net);
  std::vector<models::PassUnit> units;
  for (int l = 0; l < n; ++l) units.push_back({prog.block_kind_of(l), l, l});
  models::PassMerger merger(prog, sc.training, sc.gpu);
  Compared out;
  out.summed = merger.profiles()[static_cast<std::size_t>(merger.pass(0, kind, units, alone))];
  models::StepGraph graph(1, sc.gpu, sc.training, false);
  std::vector<sim::TaskId> deps;
  const models::RecomputeRule recompute(sc.training);
  for (const auto& u : units) models::emit_unit_body(graph, 0, prog.for_pass(alone), recompute, u, kind, &deps);
  out.whole = models::profile_of(graph, sim::run_task_graph(graph.graph()));
  return out;
}

}  // namespace

TEST_CASE("a pass's summed unit profiles match the pass run whole: EP tails beside the next unit", "[step][merge][moe]") {
  // Qwen3-235B (TP2 EP32, A2A overlap, selective recompute): its paired forward passes leave each
  // block's combine in flight beside the next block (0.84 ms tails), whose kernels lose the
  // exchange kernels' SMs meanwhile.
  const scenarios::Scenario sc = scenarios::load_scenario_file(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/external/qwen3_235b_256xh100_ep32_overlap.yaml");
  for (const models::PassKind kind : {models::PassKind::forward, models::PassKind::backward})
    for (const bool alone : {false, true}) {
      const Compared c = pass_of(sc, kind, 3, alone);
      INFO((kind == models::PassKind::forward ? "forward" : "backward") << (alone ? ", unpaired" : ", paired")
                                                                         << ": summed " << c.summed.total_s << " s + tail "
                                                                         << c.summed.tail_s << ", whole " << c.whole.total_s
                                                                         << " s + tail " << c.whole.tail_s);
      CHECK(c.summed.total_s + c.summed.tail_s == Approx(c.whole.total_s + c.whole.tail_s).epsilon(0.005));
      CHECK(c.summed.exposed[models::Channel::ep] ==
            Approx(c.whole.exposed[models::Channel::ep]).epsilon(0.02).margin(1e-5));
      CHECK(c.summed.forward_s + c.summed.backward_s + c.summed.recompute_s ==
            Approx(c.whole.forward_s + c.whole.backward_s + c.whole.recompute_s).epsilon(0.005));
    }
}

}}  // namespace CLUSTERSIM_TEST_ID
