#include "validation/hardware_pairs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "validation/validation_row.hpp"

namespace clustersim::studies {
namespace {

using row_cells::field;

// The software release a row was measured with: the container its source or framework column
// names, else its source URL (one publication, one software stack).
std::string pair_release(const row_cells::Row& row) {
  for (const char* column : {"source", "framework"})
    if (const auto r = row_cells::container_release(field(row, column)); r[0] != 0)
      return r[2] ? fmt::format("{}.{:02}.{:02} container", r[0], r[1], r[2])
                  : fmt::format("{}.{:02} container", r[0], r[1]);
  return field(row, "source_url");
}

// Everything of a row's job but its GPU type: model, GPU count, precision class, sequence, batch,
// layout, sharding and recompute as published, and release; "" for a row that names no release or
// URL. A column the row leaves blank is left out (blank in both rows of a pair).
std::string pair_job(const row_cells::Row& row) {
  const std::string release = pair_release(row);
  if (release.empty()) return "";
  std::string layout;
  for (const char* column : {"tp", "pp", "cp", "ep", "etp", "vpp", "micro_batch"}) {
    const std::string value = field(row, column);
    if (value.empty()) continue;
    layout +=
        fmt::format("{}{}{}", layout.empty() ? "" : " ", std::string(column) == "micro_batch" ? "mb" : column, value);
  }
  // The sharding and recompute as published (dense and MoE tables name the sharding column apart).
  const std::string sharding = field(row, "zero_stage_fsdp") + field(row, "zero_or_dist_opt");
  const std::string recompute = field(row, "recompute");
  return fmt::format("{}, {} GPUs, {}, seq {}, batch {}, {}{}{}, {}", field(row, "model_name"), field(row, "num_gpus"),
                     row_cells::precision_class(field(row, "precision")), field(row, "seq_len"),
                     field(row, "global_batch"), layout, sharding.empty() ? "" : ", " + sharding,
                     recompute.empty() ? "" : ", recompute " + recompute, release);
}

struct PairMember {
  const RowOutcome* outcome;
  std::string gpu;
};

}  // namespace

std::optional<HardwarePairs> hardware_pairs(const CsvTable& table, const std::vector<RowOutcome>& rows) {
  std::map<std::string, const RowOutcome*> outcome;
  for (const RowOutcome& r : rows)
    if (r.simulated && r.measured_tps_gpu > 0 && r.predicted_tps_gpu > 0) outcome[r.id] = &r;
  std::map<std::string, std::vector<PairMember>> by_job;
  for (const auto& row : table.rows) {
    const auto it = outcome.find(field(row, "id"));
    if (it == outcome.end()) continue;
    if (const std::string job = pair_job(row); !job.empty())
      by_job[job].push_back({it->second, field(row, "gpu_type")});
  }
  HardwarePairs out;
  for (const auto& [job, members] : by_job)
    for (std::size_t i = 0; i < members.size(); ++i)
      for (std::size_t j = i + 1; j < members.size(); ++j) {
        const PairMember *a = &members[i], *b = &members[j];
        if (a->gpu == b->gpu) continue;
        if (a->gpu < b->gpu) std::swap(a, b);
        out.pairs.push_back({a->outcome->id, b->outcome->id, a->gpu, b->gpu, job,
                             a->outcome->measured_tps_gpu / b->outcome->measured_tps_gpu,
                             a->outcome->predicted_tps_gpu / b->outcome->predicted_tps_gpu});
      }
  if (out.pairs.empty()) return std::nullopt;
  std::sort(out.pairs.begin(), out.pairs.end(), [](const HardwarePair& x, const HardwarePair& y) {
    return std::tie(x.a_gpu, x.b_gpu, x.job, x.a_id) < std::tie(y.a_gpu, y.b_gpu, y.job, y.a_id);
  });
  double abs_sum = 0;
  for (const HardwarePair& p : out.pairs) {
    const std::string gpus = p.a_gpu + "/" + p.b_gpu;
    if (out.classes.empty() || out.classes.back().gpus != gpus) out.classes.push_back({gpus});
    HardwarePairClass& c = out.classes.back();
    ++c.count;
    c.mean_error += p.error();
    c.mape += std::abs(p.error());
    abs_sum += std::abs(p.error());
  }
  for (HardwarePairClass& c : out.classes) c.mean_error /= c.count, c.mape /= c.count;
  out.mape = abs_sum / double(out.pairs.size());
  return out;
}

}  // namespace clustersim::studies
