#include "scenarios/import/shell_condition.hpp"

#include <cstdlib>
#include <set>

namespace clustersim::scenarios::importers::shell {
namespace {

Truth known(bool v) { return {v, ""}; }
Truth unknown(std::string why) { return {std::nullopt, std::move(why)}; }

Truth both(const Truth& a, const Truth& b, bool is_and) {
  if (a.value && *a.value != is_and) return a;  // false && x, true || x
  if (b.value && *b.value != is_and) return b;
  if (!a.value) return a;
  if (!b.value) return b;
  return known(is_and);
}

Truth negate(Truth t) {
  if (t.value) t.value = !*t.value;
  return t;
}

// Glob match of [[ a == pattern ]]: * and ? (character classes compare literally).
bool glob(const std::string& s, const std::string& p, std::size_t i = 0, std::size_t j = 0) {
  if (j == p.size()) return i == s.size();
  if (p[j] == '*') return glob(s, p, i, j + 1) || (i < s.size() && glob(s, p, i + 1, j));
  if (i < s.size() && (p[j] == '?' || p[j] == s[i])) return glob(s, p, i + 1, j + 1);
  return false;
}

std::optional<long long> integer(const std::string& s) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0') return std::nullopt;
  return v;
}

// One test expression ([[ … ]], [ … ] or test …, brackets removed) read left to right.
class Test {
 public:
  Test(std::vector<std::string> w, bool double_bracket) : w_(std::move(w)), dbl_(double_bracket) {}
  Truth value() {
    if (w_.empty()) return known(false);
    Truth t = any();
    return i_ == w_.size() ? t : unknown("a test this reader does not know: " + w_[i_]);
  }

 private:
  bool at(const char* a, const char* b) const { return i_ < w_.size() && (w_[i_] == a || w_[i_] == b); }
  Truth any() {
    Truth t = all();
    while (at("||", "-o")) ++i_, t = both(t, all(), false);
    return t;
  }
  Truth all() {
    Truth t = single();
    while (at("&&", "-a")) ++i_, t = both(t, single(), true);
    return t;
  }
  Truth single() {
    if (i_ >= w_.size()) return unknown("an incomplete test");
    if (w_[i_] == "!" && i_ + 1 < w_.size()) return ++i_, negate(single());
    static const std::set<std::string> binary = {"=", "==", "!=", "<", ">", "=~", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef"};
    if (i_ + 2 < w_.size() && binary.count(w_[i_ + 1])) {
      const std::string a = w_[i_], op = w_[i_ + 1], b = w_[i_ + 2];
      i_ += 3;
      return compare(a, op, b);
    }
    const std::string& u = w_[i_];
    if (u.size() == 2 && u[0] == '-' && i_ + 1 < w_.size()) {
      const std::string arg = w_[i_ + 1];
      i_ += 2;
      if (u == "-z") return known(arg.empty());
      if (u == "-n") return known(!arg.empty());
      return unknown("a file test: " + u + " '" + arg + "'");
    }
    return known(!w_[i_++].empty());
  }
  Truth compare(const std::string& a, const std::string& op, const std::string& b) const {
    if (op == "=" || op == "==") return known(dbl_ ? glob(a, b) : a == b);
    if (op == "!=") return known(dbl_ ? !glob(a, b) : a != b);
    if (op == "<" || op == ">") return known(op == "<" ? a < b : a > b);
    if (op == "=~") return unknown("a regular expression (" + a + " =~ " + b + ")");
    if (op == "-nt" || op == "-ot" || op == "-ef") return unknown("a file test (" + op + ")");
    const auto x = integer(a), y = integer(b);
    if (!x || !y) return unknown("an integer test of '" + a + "' and '" + b + "'");
    if (op == "-eq") return known(*x == *y);
    if (op == "-ne") return known(*x != *y);
    if (op == "-lt") return known(*x < *y);
    if (op == "-le") return known(*x <= *y);
    if (op == "-gt") return known(*x > *y);
    return known(*x >= *y);
  }

  std::vector<std::string> w_;
  bool dbl_;
  std::size_t i_ = 0;
};

// One command of the list: a test, true/false, or something that would have to run.
Truth command(std::vector<std::string> w) {
  bool negated = false;
  if (!w.empty() && w[0] == "!") negated = true, w.erase(w.begin());
  if (w.empty()) return unknown("an empty condition");
  Truth t;
  if ((w[0] == "[[" && w.back() == "]]") || (w[0] == "[" && w.back() == "]"))
    t = Test(std::vector<std::string>(w.begin() + 1, w.end() - 1), w[0] == "[[").value();
  else if (w[0] == "test") t = Test(std::vector<std::string>(w.begin() + 1, w.end()), false).value();
  else if (w.size() == 1 && (w[0] == "true" || w[0] == ":")) t = known(true);
  else if (w.size() == 1 && w[0] == "false") t = known(false);
  else t = unknown("the command `" + w[0] + "`");
  return negated ? negate(t) : t;
}

}  // namespace

Truth evaluate_condition(const std::vector<std::string>& items) {
  Truth result = known(true);
  std::string pending = "&&";
  std::vector<std::string> cmd;
  int depth = 0;  // inside [[ … ]], && and || belong to the test
  auto finish = [&] {
    const Truth t = command(cmd);
    result = pending == "&&" ? both(result, t, true) : both(result, t, false);
    cmd.clear();
  };
  for (const std::string& s : items) {
    if (s == "[[") ++depth;
    if (s == "]]") --depth;
    if (depth == 0 && (s == "&&" || s == "||")) {
      finish();
      pending = s;
      continue;
    }
    cmd.push_back(s);
  }
  finish();
  return result;
}

}  // namespace clustersim::scenarios::importers::shell
