#pragma once
// What a plan costs a budget: GPU rental per hardware, and the energy of the GPUs, their hosts and
// the building. Everything is linear in GPU-hours for one hardware, so a lower bound on
// GPU-hours bounds every figure (the plan search prunes on it).
#include <map>
#include <string>
#include <vector>

namespace clustersim::studies {

/// DGX H100: about 10.2 kW maximum system power for 8 x 700 W GPUs (hardware.md §2.4,
/// [dgxh100-ug]): the CPUs, memory, NICs, NVSwitches and fans add (10200 - 5600) / 5600 = 0.82 of
/// the GPUs' board power. Applied to every hardware unless --node-overhead-w or -fraction.
constexpr double kDgxH100SystemW = 10200, kDgxH100GpuW = 700;
constexpr double kDefaultNodeOverheadFraction = (kDgxH100SystemW - 8 * kDgxH100GpuW) / (8 * kDgxH100GpuW);
/// Facility power over IT power. 1.2: between Google's fleet-wide 1.10 (2023 Environmental
/// Report) and the 1.58 industry average of the Uptime Institute 2023 survey, what recent
/// liquid-cooled AI halls are built for. Set the site's own with --pue.
constexpr double kDefaultPue = 1.2;
/// US industrial electricity, 2023 average about 8 cents per kWh (EIA Electric Power Monthly,
/// Table 5.3). Set the contract's own with --price-per-kwh.
constexpr double kDefaultPricePerKwh = 0.08;

struct EnergyOptions {
  double node_overhead_w = -1;  ///< >= 0: watts per GPU for its share of host, network, fans
  double node_overhead_fraction = kDefaultNodeOverheadFraction;  ///< used when node_overhead_w < 0
  double pue = kDefaultPue;
  double price_per_kwh = kDefaultPricePerKwh;  ///< US dollars
};

/// Prices per GPU-hour in US dollars: "2.5" (every hardware, key "") or "h100-sxm=2.5,gb200=6".
/// Throws ScenarioError naming --cost-per-gpu-hour on a malformed list.
std::map<std::string, double> parse_gpu_hour_prices(const std::string& text);
/// The price of `hardware` (its own entry, else the "" entry, else 0).
double gpu_hour_price(const std::map<std::string, double>& prices, const std::string& hardware);
/// Throws ScenarioError when some hardware is priced and another is not (prices of hardware not
/// searched are allowed: one price list serves every search).
void check_gpu_hour_prices(const std::map<std::string, double>& prices, const std::vector<std::string>& hardware);

struct PlanCosts {
  double it_w_per_gpu = 0;     ///< board power plus its share of the node
  double energy_mwh = 0;       ///< at the meter: IT energy x PUE
  double gpu_cost_usd = 0;
  double energy_cost_usd = 0;
  double total_cost_usd = 0;
};

/// The costs of `gpu_hours` on GPUs of `board_power_w` (the profile's power: the GPUs are assumed
/// to draw it for the whole run, as budgets are sized; 0: no energy figures).
PlanCosts plan_costs(double gpu_hours, double board_power_w, double price_per_gpu_hour, const EnergyOptions& e);

/// Throws ScenarioError naming the option when an energy option is out of range.
void check_energy_options(const EnergyOptions& e);

}  // namespace clustersim::studies
