#pragma once
// The block program: what each unit of the model (a Transformer block, the embedding, the LM
// head) runs in a forward and a backward pass, in order, as data: compute pieces and the
// transfers between them, each transfer costed on the scenario's network. The step builder
// replays these lists; it knows nothing about which GEMM or collective they stand for. A new
// kind of block (MoE: router, dispatch all-to-all, grouped expert GEMMs, combine; a
// sliding-window layer) is another UnitProgram and an entry in `block_kind`.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/layer_ops.hpp"
#include "models/training_spec.hpp"
#include "topologies/network.hpp"

namespace clustersim::models {

enum class TaskKind : std::int32_t {
  forward,
  backward,
  recompute,
  optimizer,
  dp_grad_reduce,
  dp_param_gather,
  sync,
  tp_comm,
  cp_comm,
  pp_send,
  ep_comm,      ///< MoE dispatch / combine all-to-alls (and the ETP gathers around the experts)
  weight_grad,  ///< a W pass's wgrad GEMMs (schedules that split the backward; counted as backward)
  ep_exposed    ///< a merged pass's exposed EP exchanges, on the links (StepGraph::add_exchanges)
};
const char* name(TaskKind k);

/// The routed MLP's compute in an MoE block's program, as label bits beyond the BlockParts (the
/// trace names their kernels from moe_layer_ops): router + permute, the grouped expert GEMMs, the
/// unpermute, and the forward rerun of recompute_modules moe / moe_act.
enum RoutedPart : int { moe_router = kBlockParts, moe_experts, moe_unpermute, moe_rerun };

/// One step of a pass: a compute piece, or a transfer between pieces.
struct ProgramItem {
  bool comm = false;
  double seconds = 0;                  ///< compute time, or the transfer's isolated time
  TaskKind kind = TaskKind::tp_comm;   ///< comm: its communication class (tp_comm, cp_comm)
  topologies::CollectiveTime cost;     ///< comm: its phases on the network
  /// Next compute waits for this comm; otherwise it overlaps the next compute and the compute
  /// after that waits.
  bool wait_now = true;
  /// Starts when the last compute ends; otherwise when the compute before it ends (overlapped
  /// with the producing GEMM, as TE's userbuffers do) — or, for a CP ring step, right after the
  /// previous transfer on its stream.
  int start_after = 1;  // 1: last compute, 2: the compute before it, 0: stream order only
  bool sealed = false;  ///< compute: later compute pieces must not merge into it
  /// No compute waits for it; the end of the pass does (MoE exchanges overlapped with other
  /// work: training.moe_a2a_overlap).
  bool detached = false;
  std::uint16_t parts = 0;  ///< compute: the BlockParts (and RoutedParts) merged into it, bit per part (trace names)
};
using Program = std::vector<ProgramItem>;

/// Appends items, merging consecutive compute pieces unless a transfer must overlap one.
class ProgramWriter {
 public:
  /// `part`: the BlockPart it runs (-1: none), so that a trace can name its kernels.
  void compute(double s, int part = -1);
  /// Compute labelled with a set of part bits (an appended program's item).
  void compute_parts(double s, std::uint16_t parts);
  void comm(const topologies::CollectiveTime& cost, TaskKind kind, bool wait_now, int start_after);
  /// A transfer no compute of the pass waits for (see ProgramItem::detached).
  void detached_comm(const topologies::CollectiveTime& cost, TaskKind kind, int start_after);
  /// The next compute starts a task of its own.
  void split() { seal_next_ = true; }
  /// Replays another program's items (a sub-block spliced in).
  void append(const Program& items);
  Program take() { return std::move(items_); }

 private:
  Program items_;
  bool seal_next_ = false;
};

/// A unit's passes. Where the schedule splits the backward (ParallelSpec::splits_backward),
/// `backward` holds the B items (dgrad GEMMs, attention backward, memory-bound backward kernels,
/// TP/CP/EP transfers) and `weight_grad` the W items (the wgrad GEMMs); otherwise `backward` is
/// the whole backward and `weight_grad` is empty.
struct UnitProgram {
  Program forward, backward, weight_grad;
};

struct BlockProgram {
  std::vector<UnitProgram> blocks;  ///< by block kind (one kind today: the dense block)
  std::vector<int> block_kind;      ///< by layer; empty: every layer is blocks[0]
  UnitProgram embedding, head;
  double selective_recompute_s = 0;  ///< per block, before its backward (Recompute::selective)
  /// By block kind where the kinds' attention cores differ (MLA, DSA, DeepSeek-V4, sliding
  /// windows): what that kind reruns; kinds past its end rerun selective_recompute_s.
  std::vector<double> selective_recompute_by_kind;
  /// Sets kind `kind`'s rerun; kinds before it that have none get selective_recompute_s.
  void set_selective_recompute(int kind, double s) {
    if (int(selective_recompute_by_kind.size()) <= kind)
      selective_recompute_by_kind.resize(static_cast<std::size_t>(kind) + 1, selective_recompute_s);
    selective_recompute_by_kind[static_cast<std::size_t>(kind)] = s;
  }
  double selective_recompute_of(int kind) const {
    return kind >= 0 && kind < int(selective_recompute_by_kind.size())
               ? selective_recompute_by_kind[static_cast<std::size_t>(kind)]
               : selective_recompute_s;
  }
  int block_kind_of(int layer) const { return block_kind.empty() ? 0 : block_kind[static_cast<std::size_t>(layer)]; }
  const UnitProgram& block(int layer) const { return blocks[static_cast<std::size_t>(block_kind_of(layer))]; }
  /// Under training.moe_a2a_overlap, the program of a pass that runs without a partner pass and
  /// so hides no exchange (the same kinds, built with the overlap off): Megatron's combined 1F1B
  /// runs the warm-up forwards and the cool-down backwards alone (schedules.py
  /// get_pp_rank_microbatches, combined_1f1b.py). Null when every pass runs as this program.
  std::shared_ptr<const BlockProgram> unpaired;
  /// The program a pass runs: this one, or `unpaired` for a pass without a partner.
  const BlockProgram& for_pass(bool alone) const { return alone && unpaired ? *unpaired : *this; }
};

/// The TP collectives of one block: the SP all-gather before a column-parallel GEMM, and after
/// a row-parallel one the reduce-scatter (SP) or all-reduce.
struct TpComms {
  topologies::CollectiveTime ag, out;
};
TpComms tp_comms(const ParallelSpec& p, const StepCosts& c, const topologies::Network& net);

/// A block's compute by part (StepCosts::part_fwd / part_bwd, possibly replaced for another
/// attention kind) and its CP ring steps.
struct BlockParts {
  std::array<double, kBlockParts> fwd{}, bwd{};
  /// bwd split into its B items and its W items (the wgrad GEMMs, KernelOp::weight_grad).
  std::array<double, kBlockParts> bwd_input{}, wgrad{};
  double ring_fwd = 0, ring_bwd = 0;
  /// A hybrid layer without a mixer or without an MLP (models::LayerKind) skips that
  /// sub-block's TP collectives too.
  bool has_mixer = true, has_mlp = true;
};
BlockParts block_parts(const StepCosts& c);

/// The routed-expert half of an MoE MLP, spliced after the shared experts (forward) and before
/// them (backward).
struct RoutedProgram {
  Program forward, backward, weight_grad;  ///< weight_grad: see UnitProgram
  bool shared = true;  ///< the block has shared experts (TP-split like a dense MLP, with its TP collectives)
};

/// One Transformer block: the dense block, or with `routed` an MoE block whose part `mlp` is the
/// shared experts followed by the routed experts.
UnitProgram transformer_block(const ParallelSpec& p, const BlockParts& parts, const StepCosts& c,
                              const topologies::Network& net, const TpComms& x, const RoutedProgram* routed);

/// The programs of a dense Transformer under `p` (Megatron: TP all-reduce after the
/// row-parallel attention output and MLP down projections, before the column-parallel QKV and
/// MLP up in backward; with SP all-gather before and reduce-scatter after; CP ring steps around
/// the attention core).
BlockProgram dense_block_program(const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c,
                                 const topologies::Network& net);

}  // namespace clustersim::models
