#include "hardware/attention_model.hpp"
#include "hardware/csv.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

namespace clustersim::hardware {

const char* attention_csv_text();  // generated from hardware/kernels/attention.csv (CMakeLists.txt)

namespace {

// Backward / forward rate where only fwd+bwd rows exist (FA2 on A100): 0.8, the middle of the
// 15-25 % backward deficit of every GPU with both passes measured (kernels README fact 4: H200
// cuDNN 581/688 = 0.84, GB200 1226/1622 = 0.76 at 32k causal).
constexpr double kBwdOverFwd = 0.8;

std::vector<AttentionRow> parse_rows() {
  std::vector<AttentionRow> rows;
  const auto records = parse_csv_records(attention_csv_text(), "hardware/kernels/attention.csv");
  for (std::size_t i = 1; i < records.size(); ++i) {  // 0: the header
    const auto& f = records[i];
    if (f.size() < 12) continue;
    AttentionRow r;
    r.gpu = f[0], r.impl = f[1], r.dtype = f[2], r.pass = f[3];
    r.causal = f[4] == "1";
    r.head_dim_qk = std::stod(f[5]), r.head_dim_v = std::stod(f[6]), r.seq = std::stod(f[7]);
    r.batch = std::stod(f[8]), r.heads = std::stod(f[9]), r.tflops = std::stod(f[10]);
    r.source = f[11];
    rows.push_back(std::move(r));
  }
  return rows;
}

// A curve: the rows of one (gpu, impl, dtype, pass, causal, head dim), geometric mean per
// sequence length of its newest release's rows (several models or batch sizes at one length),
// sorted by length.
struct Curve {
  std::vector<std::pair<double, double>> pts;  // (seq, FLOP/s)
  double at(double seq) const {
    // Linear in log(seq) between measured lengths, flat beyond the ends (the long-context rows
    // are flat from 16k to 128k, kernels README §1).
    if (seq <= pts.front().first) return pts.front().second;
    if (seq >= pts.back().first) return pts.back().second;
    for (std::size_t i = 1; i < pts.size(); ++i)
      if (seq <= pts[i].first) {
        const double t = std::log(seq / pts[i - 1].first) / std::log(pts[i].first / pts[i - 1].first);
        return pts[i - 1].second + t * (pts[i].second - pts[i - 1].second);
      }
    return pts.back().second;
  }
};
using Key = std::tuple<std::string, std::string, std::string, std::string, bool, double>;

// The release date a row's source names (its first YYYY-MM-DD), "" when it names none.
std::string row_release_date(const std::string& source) {
  static const std::regex date(R"(20\d\d-\d\d-\d\d)");
  std::smatch m;
  return std::regex_search(source, m, date) ? m.str() : "";
}

// One point of a curve: the rows of its newest release. A later run of the same benchmark on the
// same GPU supersedes an earlier one (a newer library, not a second sample of the same kernel):
// cudnn-frontend's 2026-04 GB300 rows run 1.15-1.33x its 2025-11 artifacts at the same causal
// shapes, so averaging the two would put GB300 below GB200's 2026-04 rows.
struct CurvePoint {
  std::string release;
  double log_sum = 0;
  int count = 0;
  void add(const std::string& date, double log_rate) {
    if (count > 0 && date < release) return;
    if (count == 0 || date > release) release = date, log_sum = 0, count = 0;
    log_sum += log_rate, ++count;
  }
};

const std::map<Key, Curve>& curves() {
  static const std::map<Key, Curve> table = [] {
    std::map<Key, std::map<double, CurvePoint>> acc;
    for (const auto& r : attention_rows())
      acc[{r.gpu, r.impl, r.dtype, r.pass, r.causal, r.head_dim_qk}][r.seq].add(row_release_date(r.source),
                                                                                std::log(r.tflops * 1e12));
    std::map<Key, Curve> out;
    for (auto& [k, by_seq] : acc)
      for (auto& [s, v] : by_seq) out[k].pts.emplace_back(s, std::exp(v.log_sum / v.count));
    return out;
  }();
  return table;
}

const Curve* find(const std::string& gpu, const std::string& impl, const char* dtype,
                  const char* pass, bool causal, double head_dim, double* found_head_dim = nullptr) {
  // The nearest measured head dimension (log distance) for this (gpu, impl, dtype, pass, causal).
  const Curve* best = nullptr;
  double best_d = 1e9;
  const auto& table = curves();  // ordered by (gpu, impl, dtype, pass, causal, head dim)
  for (auto it = table.lower_bound({gpu, impl, dtype, pass, causal, 0.0}); it != table.end(); ++it) {
    const Key& k = it->first;
    if (std::get<0>(k) != gpu || std::get<1>(k) != impl || std::get<2>(k) != dtype ||
        std::get<3>(k) != pass || std::get<4>(k) != causal)
      break;
    const double d = std::abs(std::log(std::get<5>(k) / head_dim));
    if (d < best_d - 1e-12) {
      best = &it->second, best_d = d;
      if (found_head_dim) *found_head_dim = std::get<5>(k);
    }
  }
  return best;
}

// rate(head dim `want`) / rate(head dim `have`) from one GPU's rows of `dtype` measured at both
// widths, taken at `seq` held inside the lengths both curves measured (a pair measured at
// different lengths would mix the length ramp into the width ratio). The pair closest to the
// request wins: the same pass and mask first, then the same implementation; 0 when none.
double head_dim_ratio_on(const std::string& gpu, const std::string& impl, const char* dtype, const char* pass,
                         bool causal, double want, double have, double seq) {
  const auto& table = curves();
  double best = 0;
  int best_score = -1;
  for (auto it = table.lower_bound({gpu, "", "", "", false, 0.0}); it != table.end(); ++it) {
    const Key& k = it->first;
    if (std::get<0>(k) != gpu) break;
    if (std::get<2>(k) != dtype || std::get<5>(k) != want) continue;
    auto other = table.find({gpu, std::get<1>(k), dtype, std::get<3>(k), std::get<4>(k), have});
    if (other == table.end()) continue;
    const Curve &a = it->second, &b = other->second;
    const double lo = std::max(a.pts.front().first, b.pts.front().first);
    const double hi = std::min(a.pts.back().first, b.pts.back().first);
    if (lo > hi) continue;  // measured at disjoint lengths
    const int score = 4 * (std::get<3>(k) == pass) + 2 * (std::get<4>(k) == causal) + (std::get<1>(k) == impl);
    if (score <= best_score) continue;
    const double at = std::clamp(seq, lo, hi);
    best = a.at(at) / b.at(at), best_score = score;
  }
  return best;
}

// The head-dimension ratio for a curve measured at `have` asked at `want`. Head width 64 runs
// well below 128 (H100 cuDNN fwd 0.67-0.70, bwd 0.84 at 4-16k; Blackwell FA4 and cuDNN fwd
// 0.67-0.69 at 4k: the exponential unit, not the Tensor Cores, bounds a narrow head), so a GPU
// without rows at `want` borrows the ratio from its own rows of any implementation (cuDNN and FA4
// on Blackwell, cuDNN and FA3 on Hopper agree within a few per cent at both widths), then from the
// profile's other data GPUs of the same architecture (`siblings`, the profile's attention_data),
// in order; 1 when none has a pair.
double head_dim_ratio(const std::string& gpu, const std::vector<std::string>& siblings, const std::string& impl,
                      const char* dtype, const char* pass, bool causal, double want, double have, double seq) {
  if (const double r = head_dim_ratio_on(gpu, impl, dtype, pass, causal, want, have, seq); r > 0) return r;
  for (const auto& s : siblings)
    if (s != gpu)
      if (const double r = head_dim_ratio_on(s, impl, dtype, pass, causal, want, have, seq); r > 0) return r;
  return 1.0;
}

// Rate for one pass and mask from the pass's own rows, or split from fwd+bwd rows.
double pass_rate(const std::string& gpu, const std::string& impl, const AttentionQuery& q, bool causal,
                 double* first_seq = nullptr, const std::vector<std::string>& siblings = {}) {
  const char* pass = q.backward ? "bwd" : "fwd";
  double hd = q.head_dim;
  if (const Curve* c = find(gpu, impl, q.dtype, pass, causal, q.head_dim, &hd)) {
    if (first_seq) *first_seq = c->pts.front().first;
    return c->at(q.seq) *
           (hd == q.head_dim ? 1.0 : head_dim_ratio(gpu, siblings, impl, q.dtype, pass, causal, q.head_dim, hd, q.seq));
  }
  if (const Curve* fb = find(gpu, impl, q.dtype, "fwd+bwd", causal, q.head_dim)) {
    if (first_seq) *first_seq = fb->pts.front().first;
    // fwd+bwd rate R over 3.5 units of work: 3.5/R = 1/F + 2.5/(ρF)  =>  F = R(1 + 2.5/ρ)/3.5.
    const double fwd = fb->at(q.seq) * (1 + 2.5 / kBwdOverFwd) / 3.5;
    return q.backward ? kBwdOverFwd * fwd : fwd;
  }
  return 0;
}

}  // namespace

const std::vector<AttentionRow>& attention_rows() {
  static const std::vector<AttentionRow> rows = parse_rows();
  return rows;
}

units::FlopPerSecond attention_data_peak(const std::string& gpu) {
  // Dense BF16 Tensor Core peaks (kernels README §6; hardware.md §1.1). Blackwell-2.5PF: the FA4
  // PR #2605 rows whose MFU column implies 2.5 PF; Blackwell-sm100 (PR #2280, SKU not stated) is
  // taken as a B200 (the lower, 1000 W peak).
  static const std::map<std::string, double> peaks = {
      {"A100", 312e12},  {"H100", 989.4e12},  {"H200", 989.4e12},          {"B200", 2250e12},
      {"GB200", 2500e12}, {"GB300", 2500e12}, {"Blackwell-2.5PF", 2500e12}, {"Blackwell-sm100", 2250e12}};
  auto it = peaks.find(gpu);
  return units::FlopPerSecond(it == peaks.end() ? 0.0 : it->second);
}

units::FlopPerSecond measured_attention_rate(const std::string& gpu, const AttentionQuery& q, const char** how,
                                             double* first_seq, const std::vector<std::string>& siblings) {
  const std::string impl = name(q.impl);
  if (double r = pass_rate(gpu, impl, q, q.causal, first_seq, siblings); r > 0) {
    if (how) *how = "attention rows (kernel_attention.csv) for this GPU, impl, dtype, pass and mask";
    return units::FlopPerSecond(r);
  }
  // The other mask's curve for this pass, times the causal/non-causal ratio of the forward rows
  // at this length where both exist (FA3 backward rows are non-causal only).
  const double other = pass_rate(gpu, impl, q, !q.causal, first_seq, siblings);
  if (other <= 0) return {};
  AttentionQuery fq = q;
  fq.backward = false;
  const double same_f = pass_rate(gpu, impl, fq, q.causal, nullptr, siblings),
               other_f = pass_rate(gpu, impl, fq, !q.causal, nullptr, siblings);
  if (how) *how = "attention rows of the other mask, scaled by the forward causal/non-causal ratio";
  return units::FlopPerSecond((same_f > 0 && other_f > 0) ? other * same_f / other_f : other);
}

namespace {

// FlashAttention-2's share of the data GPU's dense BF16 peak at a long causal sequence; 0 without rows.
double warp_mma_share(const std::string& data_gpu) {
  const double peak = attention_data_peak(data_gpu).si();
  if (peak <= 0) return 0;
  AttentionQuery q;
  q.impl = AttentionImpl::flash2;
  q.seq = 16384;
  const double fwd = measured_attention_rate(data_gpu, q, nullptr).si();
  q.backward = true;
  const double bwd = measured_attention_rate(data_gpu, q, nullptr).si();
  return fwd > 0 && bwd > 0 ? (fwd + bwd) / 2 / peak : 0.0;
}

}  // namespace

double warp_mma_slowdown(const std::vector<std::string>& attention_data) {
  static const double hopper = warp_mma_share("H200");
  for (const std::string& d : attention_data)
    if (const double share = warp_mma_share(d); share > 0) return std::max(1.0, hopper / share);
  return 1.0;
}

}  // namespace clustersim::hardware
