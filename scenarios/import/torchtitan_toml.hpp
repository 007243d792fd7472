#pragma once
// Helpers the torchtitan importer's files share (torchtitan.cpp, torchtitan_keys.cpp,
// torchtitan_quantize.cpp).
#include <toml++/toml.h>

#include <string>

#include "scenarios/import/imported.hpp"

namespace clustersim::scenarios::importers {

/// A TOML value as the job file writes it, for warnings ("x", true, 3, [a, b]; a table: {…}).
std::string toml_shown(const toml::node& n);

/// Warns, with file and line, on every section or key of a torchtitan job the importer does not model.
void warn_unmodelled_torchtitan_keys(const toml::table& t, const std::string& src, Imported& out);

}  // namespace clustersim::scenarios::importers
