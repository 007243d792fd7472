#include <catch2/catch.hpp>

#include "models/placement.hpp"

using namespace clustersim::models;

namespace {

ParallelSpec spec(int tp, int cp, int pp, int dp) {
  ParallelSpec p;
  p.tp = tp, p.cp = cp, p.pp = pp, p.dp = dp;
  return p;
}

}  // namespace

TEST_CASE("TP innermost: a TP8 group fills a node, DP then spans one rank per node", "[models]") {
  const auto pl = make_placement(spec(8, 1, 4, 16), 8);
  REQUIRE(pl.tp.ranks == 8);
  REQUIRE(pl.tp.ranks_per_node == 8);
  REQUIRE(pl.dp.ranks == 16);
  REQUIRE(pl.dp.ranks_per_node == 1);
  REQUIRE_FALSE(pl.stages_share_node(0, 1));
}

TEST_CASE("small TP leaves room for CP, then PP, then DP inside a node", "[models]") {
  // tp 2 × cp 2 = 4 ranks per stage: stages 0 and 1 share a node, 1 and 2 do not.
  const auto pl = make_placement(spec(2, 2, 4, 8), 8);
  REQUIRE(pl.cp.ranks_per_node == 2);
  REQUIRE(pl.stages_share_node(0, 1));
  REQUIRE_FALSE(pl.stages_share_node(1, 2));
  // The DP × CP group of rank 0: its 2 CP peers are in the node, its DP peers are 16 ranks apart.
  REQUIRE(pl.dp.ranks == 16);
  REQUIRE(pl.dp.ranks_per_node == 2);
  // Pure DP: all 8 GPUs of a node belong to one group.
  const auto dp = make_placement(spec(1, 1, 1, 64), 8);
  REQUIRE(dp.dp.ranks_per_node == 8);
  REQUIRE(dp.dp.nodes() == 8);
}
