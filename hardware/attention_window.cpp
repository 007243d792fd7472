#include "hardware/attention_window.hpp"

#include <algorithm>
#include <cmath>

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

// The anchor row's call on this profile: its windowed time (the row's rate as this profile runs
// it) and the profile's causal cuDNN time of the same call without the window, kernel gaps left
// out; and from the two, the query tile's fixed cost in key tiles (t = t_tile · (overhead + tiles)).
struct Anchor {
  const WindowRow* row = nullptr;
  double windowed = 0, overhead = 0;
};

Anchor anchor_on(const GpuSpec& gpu, KernelPass pass) {
  for (const std::string& d : gpu.attention_data) {
    const WindowRow* r = anchor(d, pass);
    const units::FlopPerSecond rate = r ? attention_rate_on(gpu, d, units::FlopPerSecond(r->tflops * 1e12)) : units::FlopPerSecond{};
    if (rate.si() <= 0) continue;
    AttentionShape s;
    s.batch = r->batch, s.heads = s.kv_heads = int(r->heads);
    s.head_dim_qk = s.head_dim_v = int(r->head_dim);
    s.seq_q = s.seq_kv = r->seq;
    const double full = attention_cost(gpu, AttentionImpl::cudnn, Precision::bf16, pass, s).time.si() - gpu.kernel_gap.si();
    s.window = r->window;
    const double windowed = attention_flop(s, pass).si() / rate.si();
    if (full <= windowed) continue;  // a windowed call slower than the causal one: not this model
    const double n_window = window_tiles(r->window, r->seq);
    const double per_tile = (full - windowed) / (causal_tiles(r->seq) - n_window);
    return {r, windowed, std::max(0.0, windowed / per_tile - n_window)};
  }
  return {};
}

}  // namespace

double window_tile_overhead(const GpuSpec& gpu, KernelPass pass, const char** how) {
  const Anchor a = anchor_on(gpu, pass);
  if (a.row == nullptr) return -1;
  if (how) *how = "hardware/kernels/attention_window.csv";
  return a.overhead;
}

double windowed_attention_time_ratio(const GpuSpec& gpu, KernelPass pass, const AttentionShape& windowed) {
  const double seq = windowed.seq_kv;
  if (windowed.window <= 0 || windowed.window >= seq) return 1.0;
  AttentionShape full = windowed;
  full.window = 0;
  const Anchor a = anchor_on(gpu, pass);
  if (a.row == nullptr) return attention_flop(windowed, pass).si() / attention_flop(full, pass).si();
  // A windowed call's time per query row and head does not depend on the length (the rows from
  // 2K to 16K tokens agree within 8 %): the anchor's, for this head width and window.
  const WindowRow& r = *a.row;
  const double per_row = a.windowed / (r.batch * r.heads * r.seq) * (windowed.head_dim_qk + windowed.head_dim_v) /
                         (2 * r.head_dim) * (a.overhead + window_tiles(windowed.window, seq)) /
                         (a.overhead + window_tiles(r.window, r.seq));
  const double full_s = attention_cost(gpu, AttentionImpl::cudnn, Precision::bf16, pass, full).time.si() - gpu.kernel_gap.si();
  if (full_s <= 0) return 1.0;
  return std::min(1.0, per_row * windowed.batch * windowed.heads * windowed.seq_q / full_s);
}

}  // namespace clustersim::hardware
