#pragma once
// A scenario: everything one simulation needs, typed and validated. Produced only by load.cpp.
#include <string>

#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"
#include "models/reliability.hpp"
#include "models/training_spec.hpp"
#include "topologies/collective.hpp"
#include "topologies/placement.hpp"
#include "topologies/topology_spec.hpp"

namespace clustersim::scenarios {

struct ClusterSpec {
  int gpus = 0;
  int gpus_per_node = 8;
  /// gpus_per_node was not given and came from the NVL72 segment rule (scenarios::nvl_segment_gpus).
  bool segment_assumed = false;
};

/// The `network:` section: which topology the cluster is wired as, and the collective
/// algorithm policy (all-reduce; `automatic` chooses like NCCL).
struct NetworkSpec {
  topologies::TopologySpec topology;  ///< a preset: the one named, else the hardware profile's default_topology
  topologies::AlgorithmChoice algorithm = topologies::AlgorithmChoice::automatic;
  topologies::PlacementOrder placement = topologies::kDefaultPlacement;  ///< rank order, innermost first
  bool placement_assumed = true;  ///< network.placement not given (the report states the default)
  /// How the topology differs from the one the GPU ships in (node.default_topology): a what-if
  /// on another machine (e.g. SXM GPUs in PCIe boxes). Empty when it is that topology.
  std::string differs_from_default;
};

struct Scenario {
  std::string name;
  std::string source;           ///< file it came from ("<string>" for inline text)
  std::string model_preset;     ///< preset name, or "inline"
  std::string hardware_preset;
  models::ModelSpec model;
  hardware::GpuSpec gpu;
  ClusterSpec cluster;
  models::ParallelSpec parallel;
  models::TrainingSpec training;
  models::ReliabilitySpec reliability;
  models::DataSpec data;
  NetworkSpec network;
  /// parallelism.pp_comm_overlap was not given: Megatron-LM's default (overlap_p2p_comm on for
  /// the interleaved schedule, off otherwise), stated in the report.
  bool pp_comm_overlap_assumed = false;
  /// parallelism.sequence_parallel was not given for an MoE model with tp > 1: on, as Megatron
  /// requires there, stated in the report.
  bool sequence_parallel_assumed = false;
};

}  // namespace clustersim::scenarios
