// Issue 14's size limits on the tree, checked on the source files themselves: a physics file
// over 24 kB, a function of any layer over ~80 lines (issue 30 item 8; physics only before) or a
// CLI layer grown past 2,500 lines fails here with the file (and function) named.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace { namespace CLUSTERSIM_TEST_ID {

namespace fs = std::filesystem;

namespace {

bool is_source(const fs::path& p) { return p.extension() == ".cpp" || p.extension() == ".hpp"; }

long lines_in(const fs::path& p) {
  std::ifstream in(p);
  long n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// The text with comments, string and character literals blanked (newlines kept), so that braces
// and parentheses count as code.
std::string code_only(const std::string& src) {
  std::string out = src;
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto blank_until = [&](const std::string& end, std::size_t from) {
      const std::size_t stop = out.find(end, from);
      const std::size_t last = stop == std::string::npos ? out.size() : stop + end.size();
      for (std::size_t k = i; k < last; ++k)
        if (out[k] != '\n') out[k] = ' ';
      i = last - 1;
    };
    if (out.compare(i, 2, "//") == 0) blank_until("\n", i), out[i] = '\n';
    else if (out.compare(i, 2, "/*") == 0) blank_until("*/", i + 2);
    else if (out[i] == '"' || out[i] == '\'') {
      const char q = out[i];
      std::size_t k = i + 1;
      while (k < out.size() && out[k] != q) k += out[k] == '\\' ? 2 : 1;
      for (std::size_t j = i + 1; j < k && j < out.size(); ++j) out[j] = ' ';
      i = k;
    }
  }
  return out;
}

struct LongFunction {
  int line = 0, lines = 0;
};

// Function bodies (a brace block whose head — the code since the last ';', '{' or '}' — has a
// parameter list and sits in a namespace or a class) longer than `limit` lines, from the head's
// first line to the closing brace.
std::vector<LongFunction> long_functions(const std::string& code, int limit) {
  enum Kind { scope, function, inner };
  std::vector<std::pair<Kind, int>> open;  // kind, first line
  std::vector<LongFunction> out;
  std::string head;
  int line = 1, head_line = 1;
  static const std::regex scope_head(R"(\b(namespace|class|struct|union|enum)\b[^()]*$|^\s*extern\s)");
  for (char ch : code) {
    if (ch == '\n') ++line;
    if (ch == '{') {
      const bool in_scope = open.empty() || open.back().first == scope;
      Kind k = inner;
      if (in_scope && std::regex_search(head, scope_head)) k = scope;
      else if (in_scope && head.find(')') != std::string::npos && head.find('=') == std::string::npos) k = function;
      else if (in_scope && head.find(')') != std::string::npos && head.find("operator") != std::string::npos) k = function;
      open.push_back({k, head_line});
    } else if (ch == '}' && !open.empty()) {
      const auto [k, first] = open.back();
      open.pop_back();
      if (k == function && line - first + 1 > limit) out.push_back({first, line - first + 1});
    }
    if (ch == ';' || ch == '{' || ch == '}') {
      head.clear();
    } else {
      if (head.find_first_not_of(" \t\n") == std::string::npos && ch != ' ' && ch != '\t' && ch != '\n') head_line = line;
      head += ch;
    }
  }
  return out;
}

}  // namespace

// Functions over the limit outside the physics layers when the limit was extended to every layer
// (issue 30 item 8), per file: each is being split on the branch that reworks it (the loader's
// build and read_gpu: issue 30 item 2; the run JSON writer: item 1; mfu: item 2; the published
// row's scenario: items 2 and 4). A file must hold exactly this many: one more fails, and one
// fewer fails too, so a split removes its entry.
const std::map<std::string, int> kKnownLongFunctions = {
    {"scenarios/load.cpp", 1},
    {"validation/validation.cpp", 1},
    {"reporters/report.cpp", 1},
    {"tools/mfu_command.cpp", 1},
};

TEST_CASE("no function of any layer is over ~80 lines, but the listed ones being split", "[tools][layout]") {
  const fs::path root = CLUSTERSIM_SOURCE_DIR;
  // Issue 14 asks for "no function over ~80 lines": 85 leaves room for a closing comment.
  constexpr int kLimit = 85;
  int files = 0;
  std::map<std::string, int> found;
  for (const char* layer : {"units", "sim", "hardware", "topologies", "models", "scenarios", "studies", "validation",
                            "reporters", "tools"})
    for (const auto& e : fs::recursive_directory_iterator(root / layer))
      if (e.is_regular_file() && is_source(e.path())) {
        ++files;
        std::ifstream in(e.path());
        std::stringstream text;
        text << in.rdbuf();
        const std::string rel = fs::relative(e.path(), root).generic_string();
        for (const LongFunction& f : long_functions(code_only(text.str()), kLimit)) {
          ++found[rel];
          const bool known = kKnownLongFunctions.count(rel) > 0;
          INFO(rel << ":" << f.line << ": a function of " << f.lines << " lines");
          CHECK(known);
        }
      }
  for (const auto& [file, count] : kKnownLongFunctions) {
    INFO(file << ": " << found[file] << " functions over " << kLimit << " lines, " << count
              << " listed in kKnownLongFunctions (split one: lower the count; remove the entry at 0)");
    CHECK(found[file] == count);
  }
  CHECK(files > 200);
}

TEST_CASE("the function-length check finds a long function and passes short ones", "[tools][layout]") {
  std::string longer = "namespace a {\nint f(int x) {\n";
  for (int i = 0; i < 90; ++i) longer += "  x += 1;  // {\n";
  longer += "  return x;\n}\nstruct S {\n  int g() const { return 1; }\n};\nconst int k[] = {1, 2};\n}\n";
  const auto found = long_functions(code_only(longer), 85);
  REQUIRE(found.size() == 1);
  CHECK(found[0].line == 2);
  CHECK(found[0].lines == 93);
  CHECK(long_functions(code_only(longer), 100).empty());
}

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

}}  // namespace CLUSTERSIM_TEST_ID
