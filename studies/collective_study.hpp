#pragma once
// `clustersim collective`: one NCCL-style collective of the groups of one dimension of a
// parallel layout (TP, CP, PP, DP, or the expert groups EP, ETP, EDP that fold over a stage's
// tp·cp·dp ranks), timed on the event engine at a range of sizes (nccl-tests' table). The
// layout is the one a scenario with the same parallelism builds (models::ParallelSpec::sizes),
// so an EP all-to-all here is the one the step model charges for the same bytes.
#include <string>
#include <vector>

#include "models/training_spec.hpp"
#include "topologies/collective.hpp"
#include "topologies/placement.hpp"
#include "topologies/topology_spec.hpp"

namespace clustersim::studies {

struct CollectiveRequest {
  topologies::TopologySpec spec;
  int nodes = 1;  ///< scale-up nodes (domains) when gpus is 0
  int gpus = 0;   ///< the job's GPUs (>0: the nodes that hold them; a rack-scale domain may be part-used)
  /// >0: the topology reshaped to this many GPUs per node, as a scenario's cluster.gpus_per_node
  /// (scenarios::reshaped; e.g. 64 of an NVL72 rack's 72 GPUs, 16 of its 18 trays).
  int gpus_per_node = 0;
  topologies::Collective op = topologies::Collective::all_reduce;
  topologies::AlgorithmChoice algorithm = topologies::AlgorithmChoice::automatic;
  std::vector<double> sizes;  ///< nccl-tests S, bytes
  int tp = 1, cp = 1, pp = 1;
  int ep = 0;   ///< 0: no expert layout (the groups ep, etp, edp need one)
  int etp = 0;  ///< 0: tp, the scenario loader's default (Megatron's etp = tp)
  topologies::GroupDim group = topologies::GroupDim::dp;
  /// The EP token exchange's dispatcher (training.moe_dispatcher): alltoall sends every routed
  /// copy; deepep sends a token once per destination node, the bytes times the step model's
  /// models::deepep_node_dedup for `experts` routed experts and `top_k` per token (both needed,
  /// with --op all_to_all --group ep). allgather is an --op all_gather over the EP group.
  models::MoeDispatcher dispatcher = models::MoeDispatcher::alltoall;
  int experts = 0, top_k = 0;  ///< 0: not given
  int router_groups = 1, router_group_top_k = 0;  ///< group-limited routing (model.moe.router_*); 0: no limit
  /// Rank placement, innermost first (a scenario's network.placement).
  topologies::PlacementOrder placement = topologies::kDefaultPlacement;
};

struct CollectiveRow {
  double size_bytes = 0, time_s = 0, algbw = 0, busbw = 0;  ///< SI units
  topologies::CollectiveTime t;
};

struct CollectiveResult {
  topologies::TopologySpec spec;  ///< the topology as run (reshaped with gpus_per_node)
  int nodes = 0, gpus = 0;
  topologies::Layout layout;
  bool experts = false;  ///< an expert layout was given (--ep)
  int group_ranks = 0;   ///< ranks in one group of the dimension
  int groups = 0;        ///< concurrent groups (gpus / group_ranks)
  int group_nodes = 0;   ///< the most nodes one group spans
  /// The factor on each size's bytes (deepep: models::deepep_node_dedup; else 1). A row's
  /// size_bytes stays S, what a plain all-to-all sends, so algbw and busbw are per S.
  double dedup = 1;
  std::vector<CollectiveRow> rows;
};

/// "1KB..8GB": the sizes doubling from the first to the last (nccl-tests -b/-e/-f 2); "1GiB":
/// one. Throws ScenarioError naming --sizes.
std::vector<double> parse_collective_sizes(const std::string& text);
/// "tp,cp,dp,pp": the placed dimensions once each, innermost first. Throws ScenarioError
/// naming --placement.
topologies::PlacementOrder parse_placement(const std::string& text);
/// A topology preset by name, or a topology .yaml file. Throws ScenarioError.
topologies::TopologySpec collective_topology(const std::string& name_or_file);
/// The request's topology, reshaped to its gpus_per_node. Throws ScenarioError naming
/// --gpus-per-node when that does not fit the node.
topologies::TopologySpec collective_spec(const CollectiveRequest& r);
/// The layout of the request on `gpus` GPUs; throws ScenarioError naming the option (--tp,
/// --ep, --etp, --group) and what is allowed when the dimensions are inconsistent.
topologies::Layout collective_layout(const CollectiveRequest& r, int gpus);
/// Times the collective at every size. Throws ScenarioError on inconsistent input.
CollectiveResult run_collective_study(const CollectiveRequest& r);

}  // namespace clustersim::studies
