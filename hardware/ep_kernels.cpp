#include "hardware/ep_kernels.hpp"

#include <algorithm>
#include <map>

#include "hardware/csv.hpp"

namespace clustersim::hardware {

const char* ep_kernels_csv_text();  // compiled in (hardware/CMakeLists.txt)

namespace {

struct EpRow {
  std::string impl, device;
  int ranks = 0, sms = 0;
  double rate[3] = {0, 0, 0};  ///< GB/s by EpKernelOp; 0: not measured
};

std::vector<EpRow> parse_ep_rows() {
  std::vector<EpRow> rows;
  const auto records = parse_csv_records(ep_kernels_csv_text(), "hardware/kernels/ep_kernels.csv");
  for (const auto& f : records) {
    if (f.empty() || f[0].empty() || f[0][0] == '#' || f[0] == "impl" || f.size() < 7) continue;
    EpRow r{f[0], f[1], std::stoi(f[2]), std::stoi(f[3])};
    for (int i = 0; i < 3; ++i) r.rate[i] = f[4 + std::size_t(i)].empty() ? 0.0 : std::stod(f[4 + std::size_t(i)]);
    rows.push_back(r);
  }
  return rows;
}

const std::vector<EpRow>& ep_rows() {
  static const std::vector<EpRow> table = parse_ep_rows();
  return table;
}

// y at x on the measured (x, y) points, sorted by x: linear between them, the end value beyond.
double along_measured(const std::vector<std::pair<double, double>>& pts, double x) {
  if (pts.empty()) return 0;
  if (x <= pts.front().first) return pts.front().second;
  if (x >= pts.back().first) return pts.back().second;
  for (std::size_t i = 1; i < pts.size(); ++i)
    if (x <= pts[i].first) {
      const auto [x0, y0] = pts[i - 1];
      const auto [x1, y1] = pts[i];
      return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    }
  return pts.back().second;
}

double ep_rate_on(const std::string& device, const char* impl, int op, int ranks, int sms) {
  std::map<int, std::vector<std::pair<double, double>>> by_ranks;  // ranks -> (sms, GB/s), sorted
  for (const EpRow& r : ep_rows())
    if (r.device == device && r.impl == impl && r.rate[op] > 0) by_ranks[r.ranks].emplace_back(r.sms, r.rate[op]);
  std::vector<std::pair<double, double>> at_sms;  // (ranks, GB/s at `sms`)
  for (auto& [n, pts] : by_ranks) {
    std::sort(pts.begin(), pts.end());
    at_sms.emplace_back(n, along_measured(pts, sms));
  }
  return along_measured(at_sms, ranks);
}

}  // namespace

units::BytesPerSecond ep_kernel_rate(const GpuSpec& gpu, EpKernelImpl impl, EpKernelOp op, int ranks, int sms) {
  const char* name = impl == EpKernelImpl::deepep ? "deepep" : "hybridep";
  for (const std::string& d : gpu.ep_kernel_data)
    if (const double gbps = ep_rate_on(d, name, static_cast<int>(op), ranks, sms); gbps > 0)
      return units::BytesPerSecond(gbps * 1e9);
  return units::BytesPerSecond{};
}

bool ep_kernel_device_known(const std::string& device) {
  return std::any_of(ep_rows().begin(), ep_rows().end(), [&](const EpRow& r) { return r.device == device; });
}

}  // namespace clustersim::hardware
