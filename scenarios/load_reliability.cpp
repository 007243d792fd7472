#include "scenarios/load_reliability.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "scenarios/quantity.hpp"

namespace clustersim::scenarios {
namespace {

constexpr double kMaxBandwidthBps = 1e14;

}  // namespace

models::ReliabilitySpec read_reliability(const YamlReader& r) {
  r.allow_only({"enabled", "failures_per_gpu_hour", "gpu_mtbf", "planned_per_gpu_hour", "checkpoint_write_bw",
                "checkpoint_read_bw", "checkpoint_mode", "checkpoint_interval", "checkpoint_interval_steps",
                "restart_overhead", "warmup_steps", "warmup_slowdown", "straggler_probability",
                "straggler_slowdown"});
  models::ReliabilitySpec s;
  s.enabled = r.boolean("enabled", true);
  const std::vector<std::string> causes(models::kFailureCauseNames.begin(), models::kFailureCauseNames.end());
  const YamlReader rates = r.child("failures_per_gpu_hour");
  rates.allow_only(causes);
  for (std::size_t i = 0; i < causes.size(); ++i)
    s.failure_rate_per_gpu_s[i] = rates.number(causes[i], s.failure_rate_per_gpu_s[i] * 3600, 0, 1) / 3600;
  if (r.has("gpu_mtbf")) {
    if (r.has("failures_per_gpu_hour"))
      r.fail("gpu_mtbf", "give either gpu_mtbf or failures_per_gpu_hour, not both");
    s.failure_rate_per_gpu_s.fill(0);
    s.failure_rate_per_gpu_s[0] = 1.0 / r.quantity("gpu_mtbf", Dimension::time, 0, 1, 1e13);
  }
  s.planned_rate_per_gpu_s = r.number("planned_per_gpu_hour", s.planned_rate_per_gpu_s * 3600, 0, 1) / 3600;
  s.checkpoint_write_bps = r.quantity("checkpoint_write_bw", Dimension::bandwidth, s.checkpoint_write_bps, 1e6, kMaxBandwidthBps);
  s.checkpoint_read_bps = r.quantity("checkpoint_read_bw", Dimension::bandwidth, s.checkpoint_read_bps, 1e6, kMaxBandwidthBps);
  s.checkpoint_mode = r.enum_choice("checkpoint_mode", models::kCheckpointModeNames, models::CheckpointMode::sync);
  if (r.has("checkpoint_interval") && r.raw("checkpoint_interval").IsScalar() &&
      r.raw("checkpoint_interval").Scalar() == "auto") {
    s.checkpoint_interval_s = 0;
  } else if (r.has("checkpoint_interval")) {
    if (r.has("checkpoint_interval_steps"))
      r.fail("checkpoint_interval", "give either checkpoint_interval or checkpoint_interval_steps, not both");
    s.checkpoint_interval_s = r.quantity("checkpoint_interval", Dimension::time, 0, 1e-3, 1e9);
  }
  s.checkpoint_interval_steps = r.integer("checkpoint_interval_steps", 0, 1, 1000000000);
  s.restart_overhead_s = r.quantity("restart_overhead", Dimension::time, s.restart_overhead_s, 0, 1e7);
  s.warmup_steps = r.integer("warmup_steps", 0, 0, 1000000000);
  s.warmup_slowdown = r.number("warmup_slowdown", 1.0, 1.0, 1000);
  s.straggler_probability = r.number("straggler_probability", 0, 0, 1);
  s.straggler_slowdown = r.number("straggler_slowdown", 1.0, 1.0, 1000);
  return s;
}

models::DataSpec read_data(const YamlReader& r, int seq_len) {
  r.allow_only({"mean_seq_len", "seq_len_histogram", "packing", "buckets"});
  models::DataSpec d;
  d.packing = r.enum_choice("packing", models::kPackingNames, models::Packing::packed);
  d.mean_seq_len = r.number("mean_seq_len", 0, 1, seq_len);
  if (r.has("seq_len_histogram")) {
    if (r.has("mean_seq_len")) r.fail("seq_len_histogram", "give either mean_seq_len or seq_len_histogram, not both");
    const YAML::Node h = r.raw("seq_len_histogram");
    const char* shape = "expected a list of [length, weight] pairs, e.g. [[512, 0.6], [4096, 0.4]]";
    if (!h.IsSequence() || h.size() == 0) r.fail("seq_len_histogram", shape);
    double total = 0;
    for (const auto& bin : h) {
      if (!bin.IsSequence() || bin.size() != 2 || !bin[0].IsScalar() || !bin[1].IsScalar())
        r.fail("seq_len_histogram", shape);
      std::string why;
      const auto length = parse_quantity(bin[0].Scalar(), Dimension::count, &why);
      const auto weight = parse_quantity(bin[1].Scalar(), Dimension::count, &why);
      if (!length || *length < 1 || *length > 1e9)
        r.fail("seq_len_histogram", fmt::format("length '{}' is not a number in 1..1e9", bin[0].Scalar()));
      if (!weight || *weight < 0) r.fail("seq_len_histogram", fmt::format("weight '{}' is not a number ≥ 0", bin[1].Scalar()));
      d.histogram.emplace_back(*length, *weight);
      total += *weight;
    }
    if (total <= 0) r.fail("seq_len_histogram", "the weights sum to 0");
  }
  if (r.has("buckets")) {
    if (d.packing != models::Packing::bucketed) r.fail("buckets", "only applies with packing: bucketed");
    const YAML::Node b = r.raw("buckets");
    if (!b.IsSequence() || b.size() == 0) r.fail("buckets", "expected a list of padded lengths, e.g. [1024, 2048, 4096]");
    d.buckets = r.numbers("buckets", b.size(), 1, seq_len);
    if (!std::is_sorted(d.buckets.begin(), d.buckets.end())) r.fail("buckets", "must be in ascending order");
  }
  if (d.packing == models::Packing::bucketed && d.histogram.empty())
    r.fail("packing", "bucketed needs data.seq_len_histogram to know how far each sample is padded");
  return d;
}

}  // namespace clustersim::scenarios
