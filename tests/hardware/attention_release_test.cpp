// One GPU measured at one shape by two releases of the same benchmark: the newer release is the
// point (hardware/attention_model.cpp). cudnn-frontend's sdpa_benchmark_training ran GB300 in
// its 2025-11 artifacts (v1.16.0) and again in its 2026-04 results; at a causal, 128-wide backward of
// 8,192 tokens they read 1150.5 and 1435 TFLOP/s (hardware/kernels/attention.csv). GB200 was run
// by the 2026-04 results only (1332), so an average of GB300's two releases would rank GB300 below
// GB200 where the one benchmark run of both ranks it 8 % above.
#include <catch2/catch.hpp>

#include "hardware/attention_model.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::hardware;

namespace {

double tflops(const char* gpu, bool backward, double seq) {
  AttentionQuery q;
  q.impl = AttentionImpl::cudnn;
  q.backward = backward;
  q.causal = true;
  q.head_dim = 128;
  q.seq = seq;
  return measured_attention_rate(gpu, q, nullptr).si() / 1e12;
}

}  // namespace

TEST_CASE("attention rows: a later release of a benchmark supersedes the earlier one at the same shape",
          "[hardware][attention]") {
  CHECK(tflops("GB300", true, 8192) == Approx(1435.0));
  CHECK(tflops("GB300", false, 8192) == Approx(1856.0));
  CHECK(tflops("GB300", true, 4096) == Approx(1248.0));
  // Where only the earlier release measured a length, its row stays the point (65,536 tokens).
  CHECK(tflops("GB300", true, 65536) == Approx(1398.7));
  // The same benchmark run ranks GB300 above GB200 at this shape.
  CHECK(tflops("GB300", true, 8192) > 1.05 * tflops("GB200", true, 8192));
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
