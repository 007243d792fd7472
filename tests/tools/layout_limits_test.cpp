// Issue 14's size limits on the tree, checked on the source files themselves: a physics file
// over 24 kB or a CLI layer grown past 2,500 lines fails here with the file named.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

bool is_source(const fs::path& p) { return p.extension() == ".cpp" || p.extension() == ".hpp"; }

long lines_in(const fs::path& p) {
  std::ifstream in(p);
  long n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace

TEST_CASE("no source file of the physics layers is over 24 kB", "[tools][layout]") {
  const fs::path root = CLUSTERSIM_SOURCE_DIR;
  int seen = 0;
  for (const char* layer : {"sim", "hardware", "topologies", "models"})
    for (const auto& e : fs::recursive_directory_iterator(root / layer))
      if (e.is_regular_file() && is_source(e.path())) {
        ++seen;
        INFO(fs::relative(e.path(), root).string());
        CHECK(e.file_size() <= 24000u);
      }
  CHECK(seen > 40);  // the walk found the tree
}

TEST_CASE("tools/ (argument parsing and printing) stays within 2,500 lines", "[tools][layout]") {
  const fs::path root = CLUSTERSIM_SOURCE_DIR;
  long total = 0;
  for (const auto& e : fs::recursive_directory_iterator(root / "tools"))
    if (e.is_regular_file() && is_source(e.path()) && e.path().string().find("layering_fixture") == std::string::npos)
      total += lines_in(e.path());
  INFO("tools/ holds " << total << " lines of C++");
  CHECK(total > 500);
  CHECK(total <= 2500);
}
