#include "tools/trace.hpp"

#include "studies/json_text.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

namespace clustersim::tools {

using namespace studies;  // the library this front end prints
namespace {

std::string event_name(const models::TimelineEntry& e) {
  std::string where;
  if (e.layer >= 0) where = fmt::format(" L{}", e.layer);
  else if (e.layer == -1) where = " embedding";
  else if (e.layer == -2) where = " head";
  const std::string mb = e.micro_batch >= 0 ? fmt::format(" mb{}", e.micro_batch) : "";
  return std::string(models::name(e.kind)) + where + mb;
}

}  // namespace

std::string chrome_trace(const std::vector<models::TimelineEntry>& timeline, const std::string& title) {
  // Stable thread ids: streams in the order they first appear, per stage.
  std::map<std::pair<int, std::string>, int> tids;
  std::set<int> stages;
  for (const auto& e : timeline) {
    stages.insert(e.stage);
    tids.emplace(std::make_pair(e.stage, std::string(e.stream)), 0);
  }
  int next = 1;
  for (auto& [key, id] : tids) id = next++;
  std::string o = "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"title\": " + json_quote(title) + "},\n\"traceEvents\": [\n";
  bool first = true;
  auto emit = [&](const std::string& ev) {
    o += (first ? "" : ",\n") + ev;
    first = false;
  };
  for (int s : stages)
    emit(fmt::format("{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {}, \"args\": {{\"name\": \"pipeline stage {}\"}}}}", s, s));
  for (const auto& [key, id] : tids)
    emit(fmt::format("{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, \"args\": {{\"name\": {}}}}}",
                     key.first, id, json_quote(key.second)));
  for (const auto& e : timeline) {
    const int tid = tids.at({e.stage, std::string(e.stream)});
    emit(fmt::format("{{\"ph\": \"X\", \"name\": {}, \"cat\": \"{}\", \"pid\": {}, \"tid\": {}, \"ts\": {:.6f}, \"dur\": {:.6f}, "
                     "\"args\": {{\"micro_batch\": {}, \"layer\": {}}}}}",
                     json_quote(event_name(e)), models::name(e.kind), e.stage, tid, e.start_s * 1e6,
                     (e.end_s - e.start_s) * 1e6, e.micro_batch, e.layer));
  }
  return o + "\n]}\n";
}

}  // namespace clustersim::tools
