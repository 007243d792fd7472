#include "validation/release_spread.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "validation/validation_moe.hpp"

namespace clustersim::studies {
namespace {

// "MOE-MBRIDGE|Qwen3-30B-A3B|H100-SXM|16|fp8|4096|512|tp1 pp1 ep8 cp1 vpp mb4" →
// "Qwen3-30B-A3B, 16 x H100-SXM, fp8, seq 4096, batch 512, tp1 pp1 ep8 cp1 vpp mb4".
std::string readable(const std::string& configuration) {
  std::vector<std::string> part;
  size_t from = 0;
  for (size_t bar; (bar = configuration.find('|', from)) != std::string::npos; from = bar + 1)
    part.push_back(configuration.substr(from, bar - from));
  part.push_back(configuration.substr(from));
  if (part.size() != 8) return configuration;
  return fmt::format("{}, {} x {}, {}, seq {}, batch {}, {}", part[1], part[3], part[2], part[4], part[5], part[6], part[7]);
}

}  // namespace

std::optional<ReleaseSpread> release_spread(const CsvTable& table, const std::vector<RowOutcome>& rows) {
  std::map<std::string, const RowOutcome*> outcome;
  for (const RowOutcome& r : rows)
    if (r.simulated && r.measured_tps_gpu > 0) outcome[r.id] = &r;
  std::map<std::string, std::vector<const RowOutcome*>> by_configuration;
  for (const ReleasedRow& r : released_rows(table))
    if (auto it = outcome.find(r.id); it != outcome.end()) by_configuration[r.configuration + "|" + r.layout].push_back(it->second);

  ReleaseSpread s;
  std::vector<double> ratios;
  double blind_sum = 0, simulator_sum = 0;
  for (const auto& [configuration, group] : by_configuration) {
    if (group.size() < 2) continue;
    double log_sum = 0, lo = 1e300, hi = 0;
    for (const RowOutcome* r : group) {
      log_sum += std::log(r->measured_tps_gpu);
      lo = std::min(lo, r->measured_tps_gpu);
      hi = std::max(hi, r->measured_tps_gpu);
    }
    const double blind = std::exp(log_sum / double(group.size()));
    for (const RowOutcome* r : group) {
      blind_sum += std::abs(blind / r->measured_tps_gpu - 1);
      simulator_sum += std::abs(r->error);
    }
    ++s.configurations;
    s.rows += int(group.size());
    ratios.push_back(hi / lo);
    if (hi / lo > 1.2) ++s.over_20_percent;
    if (hi / lo > s.widest_ratio) {
      s.widest_ratio = hi / lo;
      s.widest_configuration = readable(configuration);
    }
  }
  if (s.configurations == 0) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  s.median_ratio = n % 2 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
  s.release_blind_mape = blind_sum / s.rows;
  s.simulator_mape = simulator_sum / s.rows;
  return s;
}

}  // namespace clustersim::studies
