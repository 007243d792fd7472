// DeepEP's and HybridEP's measured kernel rates (hardware/ep_kernels.hpp,
// hardware/kernels/ep_kernels.csv): how a profile reads them between and beyond the measured
// SM counts and group sizes, and which profiles have them.
#include <catch2/catch.hpp>

#include "hardware/ep_kernels.hpp"
#include "scenarios/load.hpp"
#include "support/scenario_fixture.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using hardware::EpKernelImpl;
using hardware::EpKernelOp;

double gbps(const hardware::GpuSpec& g, EpKernelImpl i, EpKernelOp op, int ranks, int sms) {
  return hardware::ep_kernel_rate(g, i, op, ranks, sms).si() / 1e9;
}

TEST_CASE("EP kernel rates: linear between measured SM counts and group sizes, the nearest beyond", "[hardware][moe]") {
  const auto gb200 = testing::gpu_profile("gb200");
  // Measured points (README_Hybrid-EP.md GB200 HybridEP table, torch API).
  CHECK(gbps(gb200, EpKernelImpl::hybridep, EpKernelOp::combine, 16, 32) == Approx(521.55));
  CHECK(gbps(gb200, EpKernelImpl::hybridep, EpKernelOp::dispatch_fp8, 8, 16) == Approx(421.67));
  // Halfway in SMs (8 ranks, 16 and 32 SMs measured) and in ranks (16 and 24 measured, 32 SMs).
  CHECK(gbps(gb200, EpKernelImpl::hybridep, EpKernelOp::dispatch_fp8, 8, 24) == Approx((421.67 + 455.35) / 2));
  CHECK(gbps(gb200, EpKernelImpl::hybridep, EpKernelOp::combine, 20, 32) == Approx((521.55 + 483.76) / 2));
  // Beyond the table: more SMs than measured keep the last rate, and a group larger than the
  // 36 measured ranks of one NVL72 domain keeps the 36-rank rate.
  CHECK(gbps(gb200, EpKernelImpl::hybridep, EpKernelOp::combine, 8, 64) == Approx(568.94));
  CHECK(gbps(gb200, EpKernelImpl::hybridep, EpKernelOp::combine, 64, 32) == Approx(447.89));
  // What the data says about the two: past 8 ranks DeepEP's combine falls to a third of
  // HybridEP's on 32 SMs (24 ranks: 207 against 484 GB/s).
  CHECK(gbps(gb200, EpKernelImpl::deepep, EpKernelOp::combine, 24, 32) <
        0.5 * gbps(gb200, EpKernelImpl::hybridep, EpKernelOp::combine, 24, 32));
}

TEST_CASE("EP kernel rates: which profiles read which measured rows", "[hardware][moe]") {
  // B300 borrows B200's rows (the same NVLink 5 node), GB300 GB200's; H800 has DeepEP's V1
  // intranode row (FP8 dispatch and combine only); H100 and A100 have none.
  CHECK(gbps(testing::gpu_profile("b300"), EpKernelImpl::deepep, EpKernelOp::dispatch_bf16, 8, 24) ==
        gbps(testing::gpu_profile("b200"), EpKernelImpl::deepep, EpKernelOp::dispatch_bf16, 8, 24));
  CHECK(gbps(testing::gpu_profile("gb300"), EpKernelImpl::hybridep, EpKernelOp::combine, 32, 32) ==
        gbps(testing::gpu_profile("gb200"), EpKernelImpl::hybridep, EpKernelOp::combine, 32, 32));
  const auto h800 = testing::gpu_profile("h800");
  CHECK(gbps(h800, EpKernelImpl::deepep, EpKernelOp::dispatch_fp8, 8, 24) == Approx(153));
  CHECK(gbps(h800, EpKernelImpl::deepep, EpKernelOp::dispatch_bf16, 8, 24) == 0);
  CHECK(gbps(h800, EpKernelImpl::hybridep, EpKernelOp::combine, 8, 24) == 0);
  CHECK(gbps(testing::gpu_profile("h100-sxm"), EpKernelImpl::deepep, EpKernelOp::combine, 8, 24) == 0);
  CHECK(gbps(testing::gpu_profile("a100-80gb"), EpKernelImpl::hybridep, EpKernelOp::combine, 8, 32) == 0);
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
