#include "validation/conventions.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "scenarios/error.hpp"
#include "studies/csv_table.hpp"

namespace clustersim::studies {
namespace {

bool matches_one(const std::string& pattern, const std::string& family) {
  if (!pattern.empty() && pattern.back() == '*') return family.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
  return pattern == family;
}

// A family cell: one pattern, or several separated by '|' (families of one source).
bool matches(const std::string& cell, const std::string& family) {
  std::size_t from = 0;
  for (std::size_t bar; (bar = cell.find('|', from)) != std::string::npos; from = bar + 1)
    if (matches_one(cell.substr(from, bar - from), family)) return true;
  return matches_one(cell.substr(from), family);
}

bool parse_bool(const Convention& c, const std::string& where) {
  if (c.value == "true") return true;
  if (c.value == "false") return false;
  throw scenarios::ScenarioError(fmt::format("{}: {} = '{}': allowed: true, false", where, c.key, c.value));
}

// A rank order: tp, cp, pp and dp once each, innermost first.
std::string parse_placement(const Convention& c, const std::string& where) {
  std::vector<std::string> names;
  std::string cur;
  for (char ch : c.value + ",") {
    if (ch == ',') names.push_back(cur), cur.clear();
    else cur += ch;
  }
  std::sort(names.begin(), names.end());
  if (names != std::vector<std::string>{"cp", "dp", "pp", "tp"})
    throw scenarios::ScenarioError(fmt::format("{}: placement = '{}': allowed: tp, cp, pp and dp once each, innermost "
                                               "first, e.g. tp,cp,dp,pp", where, c.value));
  return c.value;
}

// The convention's value when it is one of `allowed`; else an error naming the key and them.
const std::string& one_of(const Convention& c, const std::string& where, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), c.value) == allowed.end())
    throw scenarios::ScenarioError(
        fmt::format("{}: {} = '{}': allowed: {}", where, c.key, c.value, fmt::join(allowed, ", ")));
  return c.value;
}

// Applies one convention; `where` is file:line for errors.
void apply(const Convention& c, const std::string& where, FamilyConventions* out) {
  if (c.key == "flash_attention") out->flash_attention = parse_bool(c, where);
  else if (c.key == "attention_impl") out->attention_impl = one_of(c, where, {"cudnn", "flash1", "flash2", "flash3", "flash4"});
  else if (c.key == "sequence_parallel_with_tp") out->sequence_parallel_with_tp = parse_bool(c, where);
  else if (c.key == "tp_comm_overlap") out->tp_comm_overlap = parse_bool(c, where);
  else if (c.key == "recompute") out->recompute = one_of(c, where, {"none", "selective", "full"});
  else if (c.key == "selective_recompute")
    out->selective_recompute = one_of(c, where, {"attention_core", "fewest_blocks_that_fit"});
  else if (c.key == "zero_stage") out->zero_stage = one_of(c, where, {"0", "1", "2", "3"})[0] - '0';
  else if (c.key == "fp8_recipe") out->fp8_recipe = one_of(c, where, {"tensorwise", "delayed", "rowwise", "blockwise"});
  else if (c.key == "fp8_saved_inputs") out->fp8_saved_inputs = one_of(c, where, {"quantized", "bf16"});
  else if (c.key == "grad_reduce_dtype") out->grad_reduce_dtype = one_of(c, where, {"fp32", "bf16"});
  else if (c.key == "optimizer_dtype") out->optimizer_dtype = one_of(c, where, {"fp32", "bf16"});
  else if (c.key == "cross_entropy") out->cross_entropy = one_of(c, where, {"fp32", "fused"});
  else if (c.key == "moe_dispatcher")
    out->moe_dispatcher = one_of(c, where, {"alltoall", "allgather", "deepep", "hybridep"});
  else if (c.key == "moe_load_imbalance") {
    char* end = nullptr;
    const double v = std::strtod(c.value.c_str(), &end);
    if (c.value != "auto" && (c.value.empty() || *end != '\0' || !(v >= 1)))
      throw scenarios::ScenarioError(fmt::format("{}: moe_load_imbalance = '{}': allowed: auto, a number >= 1", where, c.value));
    out->moe_load_imbalance = c.value;
  } else if (c.key == "moe_permute_fusion") {
    out->moe_permute_fusion = parse_bool(c, where) ? "true" : "false";
  } else if (c.key == "placement") {
    out->placement = parse_placement(c, where);
  } else {
    throw scenarios::ScenarioError(fmt::format(
        "{}: unknown key '{}': allowed: flash_attention, attention_impl, recompute, selective_recompute, zero_stage, "
        "sequence_parallel_with_tp, tp_comm_overlap, fp8_recipe, fp8_saved_inputs, grad_reduce_dtype, optimizer_dtype, "
        "cross_entropy, moe_dispatcher, moe_load_imbalance, moe_permute_fusion, placement",
        where, c.key));
  }
}

}  // namespace

std::vector<Convention> parse_conventions(const std::string& text, const std::string& source_name) {
  const CsvTable t = parse_csv(text, source_name);
  for (const char* col : {"family", "key", "value", "source"})
    if (std::find(t.columns.begin(), t.columns.end(), col) == t.columns.end())
      throw scenarios::ScenarioError(fmt::format("{}:1: missing column '{}': allowed header: family,key,value,source",
                                                 source_name, col));
  std::vector<Convention> out;
  FamilyConventions probe;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    Convention c{r.at("family"), r.at("key"), r.at("value"), r.at("source")};
    const std::string where = fmt::format("{}:{}", source_name, i + 2);
    if (c.source.empty()) throw scenarios::ScenarioError(fmt::format("{}: source: every convention cites its source", where));
    apply(c, where, &probe);  // validates key and value
    out.push_back(std::move(c));
  }
  return out;
}

const std::vector<Convention>& default_conventions() {
  static const std::vector<Convention> table =
      parse_conventions(family_conventions_text(), "data/validation/family_conventions.csv");
  return table;
}

FamilyConventions conventions_for(const std::string& family, const std::vector<Convention>& table) {
  FamilyConventions out;
  for (const auto& c : table)
    if (matches(c.family, family)) apply(c, c.family, &out);
  return out;
}

}  // namespace clustersim::studies
