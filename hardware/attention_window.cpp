#include "hardware/attention_window.hpp"

#include <algorithm>
#include <cmath>

#include "hardware/attention_model.hpp"
#include "hardware/csv.hpp"

namespace clustersim::hardware {

const char* attention_window_csv_text();  // compiled in (hardware/CMakeLists.txt)

namespace {

constexpr double kTile = 128;          // query and key tile rows of the fused kernels
constexpr double kAnchorSeq = 4096;    // the row the overhead is taken from; the others check it

double causal_tiles(double seq) { return (seq / kTile + 1) / 2; }
double window_tiles(double window, double seq) { return std::min(std::ceil(window / kTile) + 1, causal_tiles(seq)); }

std::vector<WindowRow> parse() {
  std::vector<WindowRow> rows;
  const auto records = parse_csv_records(attention_window_csv_text(), "hardware/kernels/attention_window.csv");
  for (std::size_t i = 1; i < records.size(); ++i) {  // 0: the header
    const auto& f = records[i];
    if (f.size() < 11) continue;
    rows.push_back({f[0], f[3], std::stod(f[4]), std::stod(f[5]), std::stod(f[6]), std::stod(f[7]), std::stod(f[8]),
                    std::stod(f[9])});
  }
  return rows;
}

const WindowRow* anchor(const std::string& data_gpu, KernelPass pass) {
  const char* name = pass == KernelPass::backward ? "bwd" : "fwd";
  for (const WindowRow& r : window_rows())
    if (r.gpu == data_gpu && r.pass == name && r.seq == kAnchorSeq) return &r;
  return nullptr;
}

}  // namespace

const std::vector<WindowRow>& window_rows() {
  static const std::vector<WindowRow> rows = parse();
  return rows;
}

namespace {

// The anchor row's call on this profile: its windowed time (the row's rate, scaled as
// attention_cost scales every measured rate) and the profile's causal cuDNN time of the same
// call without the window, kernel gaps left out.
struct AnchorTimes {
  double windowed = 0, full = 0;
  const WindowRow* row = nullptr;
};

AnchorTimes anchor_times(const GpuSpec& gpu, KernelPass pass) {
  for (const std::string& d : gpu.attention_data) {
    const WindowRow* r = anchor(d, pass);
    const units::FlopPerSecond data_peak = attention_data_peak(d);
    if (r == nullptr || data_peak.si() <= 0) continue;
    AttentionShape s;
    s.batch = r->batch, s.heads = s.kv_heads = int(r->heads);
    s.head_dim_qk = s.head_dim_v = int(r->head_dim);
    s.seq_q = s.seq_kv = r->seq;
    AnchorTimes a;
    a.row = r;
    a.full = attention_cost(gpu, AttentionImpl::cudnn, Precision::bf16, pass, s).time.si() - gpu.kernel_gap.si();
    s.window = r->window;
    const double rate = r->tflops * 1e12 * gpu.peak(Precision::bf16).si() / data_peak.si() * gpu.sustained_clock_ratio *
                        gpu.in_step_rate_ratio * gpu.compute_sustained_fraction;
    a.windowed = attention_flop(s, pass).si() / rate;
    if (a.full > a.windowed) return a;  // else a windowed call slower than the causal one: not this model
  }
  return {};
}

}  // namespace

double window_tile_overhead(const GpuSpec& gpu, KernelPass pass, const char** how) {
  const AnchorTimes a = anchor_times(gpu, pass);
  if (a.row == nullptr) return -1;
  if (how) *how = "hardware/kernels/attention_window.csv";
  // t = t_tile · (overhead + tiles) for both calls of the anchor.
  const double n_full = causal_tiles(a.row->seq), n_window = window_tiles(a.row->window, a.row->seq);
  const double per_tile = (a.full - a.windowed) / (n_full - n_window);
  return std::max(0.0, a.windowed / per_tile - n_window);
}

double windowed_attention_time_ratio(const GpuSpec& gpu, KernelPass pass, const AttentionShape& windowed) {
  const double seq = windowed.seq_kv;
  if (windowed.window <= 0 || windowed.window >= seq) return 1.0;
  AttentionShape full = windowed;
  full.window = 0;
  const AnchorTimes a = anchor_times(gpu, pass);
  if (a.row == nullptr) return attention_flop(windowed, pass).si() / attention_flop(full, pass).si();
  // A windowed call's time per query row and head does not depend on the length (the rows from
  // 2K to 16K tokens agree within 8 %): the anchor's, for this head width and window.
  const WindowRow& r = *a.row;
  const double overhead = window_tile_overhead(gpu, pass);
  const double per_row = a.windowed / (r.batch * r.heads * r.seq) * (windowed.head_dim_qk + windowed.head_dim_v) /
                         (2 * r.head_dim) * (overhead + window_tiles(windowed.window, seq)) /
                         (overhead + window_tiles(r.window, r.seq));
  const double full_s = attention_cost(gpu, AttentionImpl::cudnn, Precision::bf16, pass, full).time.si() - gpu.kernel_gap.si();
  if (full_s <= 0) return 1.0;
  return std::min(1.0, per_row * windowed.batch * windowed.heads * windowed.seq_q / full_s);
}

}  // namespace clustersim::hardware
