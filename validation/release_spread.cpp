#include "validation/release_spread.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace clustersim::studies {

std::optional<ReleaseSpread> release_spread(const std::vector<ReleasedRow>& released, const std::vector<RowOutcome>& rows) {
  std::map<std::string, const RowOutcome*> outcome;
  for (const RowOutcome& r : rows)
    if (r.simulated && r.measured_tps_gpu > 0) outcome[r.id] = &r;
  std::map<std::string, std::vector<const RowOutcome*>> by_configuration;  // configuration and layout
  std::map<std::string, std::string> label;
  for (const ReleasedRow& r : released)
    if (auto it = outcome.find(r.id); it != outcome.end()) {
      const std::string key = r.configuration + "|" + r.layout;
      by_configuration[key].push_back(it->second);
      label.emplace(key, r.label + ", " + r.layout);
    }

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
      s.widest_configuration = label.at(configuration);
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
