#include "tools/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace clustersim::tools {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

ProgressBar::ProgressBar(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled), start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressBar::update(std::uint64_t done, std::uint64_t total) {
  if (!enabled_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? double(done) / elapsed : 0;
  const double eta = rate > 0 ? double(total - done) / rate : 0;
  constexpr int kWidth = 30;
  const int filled = int(kWidth * double(done) / double(total));
  const auto clock = [](double s) {
    const long t = long(s + 0.5);
    return fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
  };
  fmt::print(stderr, "\r{} [{}{}] {:5.1f}% {}/{}  {:.0f}/s  {} {}   ", label_, std::string(std::size_t(filled), '#'),
             std::string(std::size_t(kWidth - filled), '.'), 100.0 * double(done) / double(total), done, total, rate,
             done < total ? "ETA" : "took", clock(done < total ? eta : elapsed));
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (drawn_) fmt::print(stderr, "\n");
  drawn_ = false;
}

}  // namespace clustersim::tools
