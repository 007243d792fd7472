#pragma once
// One name table per enum: the scenario key's allowed values, in the order the loader lists
// them, each paired with its enum value (so neither depends on the other's order). The loader
// reads a key through it (scenarios YamlReader::enum_choice), writers print name(), grids and
// error messages list names_in(); a name is written once, here.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::models {

template <class E>
struct Named {
  E value;
  std::string_view name;  ///< a string literal: name().data() is null-terminated
};

template <class E, std::size_t N>
using NameTable = std::array<Named<E>, N>;

/// The name of `v` in `table`; "?" for a value the table lacks (a test checks none does).
template <class E, std::size_t N>
constexpr std::string_view name_in(const NameTable<E, N>& table, E v) {
  for (const auto& n : table)
    if (n.value == v) return n.name;
  return "?";
}

/// The value named `name`, if any.
template <class E, std::size_t N>
constexpr std::optional<E> value_named(const NameTable<E, N>& table, std::string_view name) {
  for (const auto& n : table)
    if (n.name == name) return n.value;
  return std::nullopt;
}

/// Every name, in table order.
template <class E, std::size_t N>
std::vector<std::string> names_in(const NameTable<E, N>& table) {
  std::vector<std::string> out;
  for (const auto& n : table) out.emplace_back(n.name);
  return out;
}

}  // namespace clustersim::models
