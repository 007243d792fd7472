#include "tools/sweep_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "scenarios/error.hpp"
#include "studies/auto_grid.hpp"

namespace clustersim::tools {

using scenarios::ScenarioError;
using studies::Axis;

namespace {

// A key the loader does not know would make every configuration invalid; say so once instead,
// naming the flag it came from.
void reject_unknown_keys(const scenarios::ScenarioTemplate& base, const std::vector<Axis>& axes,
                         const std::vector<std::string>& sets) {
  struct Probe {
    std::string key, assignment, origin;
  };
  std::vector<Probe> probes;
  for (const auto& a : axes) probes.push_back({a.key, a.key + "=" + a.values.front(), "--vary"});
  for (const auto& s : sets) probes.push_back({s.substr(0, s.find('=')), s, "--set"});
  for (const auto& p : probes) {
    try {
      base.instantiate({p.assignment});
    } catch (const ScenarioError& e) {
      const std::string what = e.what();
      if (what.find("unknown key") == std::string::npos || what.find(p.key) == std::string::npos) continue;
      if (what.rfind("--set ", 0) == 0) throw ScenarioError(p.origin + what.substr(5));
      throw;
    }
  }
}

bool names_gpus(const std::vector<Axis>& axes, const std::vector<std::string>& sets) {
  return std::any_of(axes.begin(), axes.end(), [](const Axis& x) { return x.key == "cluster.gpus"; }) ||
         std::any_of(sets.begin(), sets.end(), [](const std::string& s) { return s.rfind("cluster.gpus=", 0) == 0; });
}

}  // namespace

void check_threads(int threads) {
  if (threads < 0 || threads > 4096)
    throw ScenarioError(fmt::format("--threads {}: expected 0 (every core) to 4096 worker threads", threads));
}

SweepSetup sweep_setup(const scenarios::ScenarioTemplate& base, const std::string& source, const std::vector<std::string>& vary,
                       bool auto_parallel, const std::vector<std::string>& sets, const std::string& schedules, int threads) {
  check_threads(threads);
  std::vector<Axis> axes;
  for (const auto& v : vary) axes.push_back(studies::parse_axis(v));
  int base_gpus = 0;
  if (const auto g = base.scalar_at("cluster.gpus")) base_gpus = std::atoi(g->c_str());
  studies::SweepSpace space = studies::sweep_space_for(base, axes, auto_parallel, sets, schedules);
  reject_unknown_keys(base, axes, sets);
  if (auto_parallel && base_gpus <= 0 && !names_gpus(axes, sets))
    throw ScenarioError(fmt::format("{}: --auto-parallel needs cluster.gpus (in the file, --set or --vary)", source));
  return {std::move(axes), std::move(space)};
}

}  // namespace clustersim::tools
