// The precision cell of a published row → training.precision / fp8_recipe lines, the same for the
// dense and the MoE table: the recipe the cell names, else the family's convention, else the
// loader's default, and the assumption recorded when the cell names none.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "validation/conventions.hpp"
#include "validation/validation_precision.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

namespace {

struct Mapped {
  std::string yaml;
  std::vector<std::string> assumptions;
};

Mapped map(const std::string& family, const std::string& cell) {
  RowScenario out;
  const std::map<std::string, std::string> row{{"id", family + "-001"}, {"precision", cell}};
  // The training: keys of the patch as YAML, without the section line.
  const std::string yaml = precision_patch(row, conventions_for(family), &out).yaml().substr(std::string("training:\n").size());
  return {yaml, out.assumptions};
}

bool assumed(const Mapped& m, const std::string& what) {
  return std::any_of(m.assumptions.begin(), m.assumptions.end(),
                     [&](const std::string& a) { return a.find(what) != std::string::npos; });
}

}  // namespace

TEST_CASE("a precision cell's own FP8 recipe wins over the family's, which wins over the loader's", "[validation][precision]") {
  CHECK(map("TORCHTITAN", "fp8 rowwise").yaml == "  precision: fp8\n  fp8_recipe: rowwise\n  fp8_saved_inputs: bf16\n");
  CHECK(map("TORCHTITAN", "fp8 linears (torchao Float8) + bf16").yaml ==
        "  precision: fp8\n  fp8_recipe: tensorwise\n  fp8_saved_inputs: bf16\n");
  CHECK(map("MBRIDGE", "fp8 current-scaling (FP8-CS)").yaml == "  precision: fp8\n  fp8_recipe: tensorwise\n  grad_reduce_dtype: bf16\n");
  const Mapped bridge = map("MBRIDGE", "fp8");  // Megatron-Bridge's perf scripts have no delayed scaling
  CHECK(bridge.yaml == "  precision: fp8\n  fp8_recipe: tensorwise\n  grad_reduce_dtype: bf16\n");
  CHECK(assumed(bridge, "gradients reduced in bf16"));
  CHECK(assumed(bridge, "FP8 scaling recipe not stated: tensorwise"));
  const Mapped nemo = map("NEMO2407", "fp8");  // no convention: the loader's default, delayed scaling
  CHECK(nemo.yaml == "  precision: fp8\n");
  CHECK(assumed(nemo, "FP8 scaling recipe not stated: delayed"));
  CHECK(map("MOE-DSREPORT", "fp8 (fine-grained 1x128 / 128x128 block scaling)").yaml ==
        "  precision: fp8\n  fp8_recipe: blockwise\n");
}

TEST_CASE("block-scaled formats run as such, 16-bit cells as bf16 or fp16", "[validation][precision]") {
  CHECK(map("MBRIDGE", "mxfp8").yaml == "  precision: mxfp8\n  grad_reduce_dtype: bf16\n");
  CHECK(map("MBRIDGE", "nvfp4").yaml == "  precision: nvfp4\n  grad_reduce_dtype: bf16\n");
  CHECK(map("MEG-2020", "fp16 mixed").yaml == "  precision: fp16\n");
  CHECK(map("LLMFOUNDRY", "bf16 (AMP)").yaml == "  precision: bf16\n");
  const Mapped korth = map("KORTH", "mixed precision (16-bit; fp16/bf16 not stated)");
  CHECK(korth.yaml == "  precision: bf16\n");
  const Mapped blank = map("KORTH", "mixed precision (16-bit)");
  CHECK(blank.yaml == "  precision: bf16\n");
  CHECK(assumed(blank, "precision not stated: bf16"));
}

TEST_CASE("a convention with an FP8 recipe or saved-input choice outside the allowed ones names the line", "[validation][precision]") {
  CHECK_THROWS_WITH(parse_conventions("family,key,value,source\nX,fp8_recipe,hybrid,\"a source\"\n", "conv.csv"),
                    "conv.csv:2: fp8_recipe = 'hybrid': allowed: tensorwise, delayed, rowwise, blockwise");
  CHECK_THROWS_WITH(parse_conventions("family,key,value,source\nX,fp8_saved_inputs,fp8,\"a source\"\n", "conv.csv"),
                    "conv.csv:2: fp8_saved_inputs = 'fp8': allowed: quantized, bf16");
}

TEST_CASE("a convention's family cell may name several families of one source, separated by '|'", "[validation][precision]") {
  const auto table = parse_conventions("family,key,value,source\nA|B*,fp8_recipe,rowwise,\"a source\"\n", "conv.csv");
  CHECK(conventions_for("A", table).fp8_recipe == "rowwise");
  CHECK(conventions_for("B-2", table).fp8_recipe == "rowwise");
  CHECK(conventions_for("AB", table).fp8_recipe.empty());
  // The shipped file: published_newhw.csv's Megatron-Bridge rows share MBRIDGE's lines.
  const FamilyConventions dense = conventions_for("DENSE-MBRIDGE");
  CHECK(dense.zero_stage == 1);
  CHECK(dense.tp_comm_overlap);
  CHECK(dense.fp8_recipe == "tensorwise");
}

}}  // namespace CLUSTERSIM_TEST_ID
