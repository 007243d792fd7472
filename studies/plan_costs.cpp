#include "studies/plan_costs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "scenarios/error.hpp"

namespace clustersim::studies {
namespace {

using scenarios::ScenarioError;

bool parse_price(const std::string& s, double* v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size() && std::isfinite(*v) && *v >= 0;
}

}  // namespace

std::map<std::string, double> parse_gpu_hour_prices(const std::string& text) {
  std::map<std::string, double> prices;
  std::size_t start = 0;
  const auto bad = [&](const std::string& item, const std::string& why) {
    return ScenarioError(fmt::format("--cost-per-gpu-hour {}: '{}' {}; expected a price such as 2.5 (every hardware) "
                                     "or hardware=price pairs such as h100-sxm=2.5,gb200=6",
                                     text, item, why));
  };
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    const std::string item = text.substr(start, i - start);
    start = i + 1;
    const auto eq = item.find('=');
    const std::string hw = eq == std::string::npos ? "" : item.substr(0, eq);
    double v = 0;
    if (!parse_price(eq == std::string::npos ? item : item.substr(eq + 1), &v)) throw bad(item, "is not a price >= 0");
    if (eq != std::string::npos && hw.empty()) throw bad(item, "names no hardware");
    if (!prices.emplace(hw, v).second) throw bad(item, hw.empty() ? "gives a second price for all" : "prices it twice");
  }
  return prices;
}

double gpu_hour_price(const std::map<std::string, double>& prices, const std::string& hardware) {
  auto it = prices.find(hardware);
  if (it == prices.end()) it = prices.find("");
  return it == prices.end() ? 0 : it->second;
}

void check_gpu_hour_prices(const std::map<std::string, double>& prices, const std::vector<std::string>& hardware) {
  if (prices.empty() || prices.count("")) return;
  for (const auto& hw : hardware)
    if (!prices.count(hw))
      throw ScenarioError(fmt::format("--cost-per-gpu-hour: no price for {}; price every hardware (or give one number "
                                      "for all) so that costs compare", hw));
}

PlanCosts plan_costs(double gpu_hours, double board_power_w, double price_per_gpu_hour, const EnergyOptions& e) {
  PlanCosts c;
  const double overhead_w = e.node_overhead_w >= 0 ? e.node_overhead_w : e.node_overhead_fraction * board_power_w;
  c.it_w_per_gpu = board_power_w > 0 ? board_power_w + overhead_w : 0;
  c.energy_mwh = gpu_hours * c.it_w_per_gpu * e.pue / 1e6;  // W·h -> MWh
  c.gpu_cost_usd = gpu_hours * price_per_gpu_hour;
  c.energy_cost_usd = c.energy_mwh * 1000 * e.price_per_kwh;
  c.total_cost_usd = c.gpu_cost_usd + c.energy_cost_usd;
  return c;
}

void check_energy_options(const EnergyOptions& e) {
  if (!(e.pue >= 1 && e.pue <= 5)) throw ScenarioError(fmt::format("--pue {}: expected a number from 1 to 5", e.pue));
  if (!(e.price_per_kwh >= 0 && e.price_per_kwh <= 100))
    throw ScenarioError(fmt::format("--price-per-kwh {}: expected dollars per kWh from 0 to 100", e.price_per_kwh));
  if (!(e.node_overhead_fraction >= 0 && e.node_overhead_fraction <= 10))
    throw ScenarioError(fmt::format("--node-overhead-fraction {}: expected a fraction of board power from 0 to 10",
                                    e.node_overhead_fraction));
  if (!(e.node_overhead_w < 0 || e.node_overhead_w <= 1e5))
    throw ScenarioError(fmt::format("--node-overhead-w {}: expected watts per GPU from 0 to 100000", e.node_overhead_w));
}

}  // namespace clustersim::studies
