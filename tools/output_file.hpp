#pragma once
// A streamed output file (sweep CSV / JSON lines, possibly millions of rows) written under a
// temporary name and renamed into place by commit(), so that an error or Ctrl-C never leaves a
// truncated file that looks complete.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "scenarios/error.hpp"

namespace clustersim::tools {

class OutputFile {
 public:
  explicit OutputFile(std::string path)
      : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())),
        out_(tmp_, std::ios::binary | std::ios::trunc) {
    if (!out_) throw scenarios::ScenarioError(fmt::format("{}: cannot open for writing", path_));
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (!committed_) std::remove(tmp_.c_str());
  }
  std::ostream& stream() { return out_; }
  void commit() {
    out_.close();
    if (!out_ || std::rename(tmp_.c_str(), path_.c_str()) != 0)
      throw scenarios::ScenarioError(fmt::format("{}: write failed", path_));
    committed_ = true;
  }

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

/// A whole file written the same way (plots, traces).
inline void write_file_atomically(const std::string& path, const std::string& content) {
  OutputFile file(path);
  file.stream() << content;
  file.commit();
}

}  // namespace clustersim::tools
