#include "scenarios/import/shell_expand.hpp"

#include <cctype>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace clustersim::scenarios::importers::shell {
namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Integer arithmetic of $(( … )) and (( … )): + - * / %, parentheses and one comparison (< <= > >= == !=,
// 1 or 0) over integers (variables already expanded).
class Arithmetic {
 public:
  explicit Arithmetic(std::string s) : s_(std::move(s)) {}
  std::optional<std::int64_t> value() {
    try {
      const std::int64_t v = comparison();
      skip();
      if (i_ != s_.size()) return std::nullopt;
      return v;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

 private:
  void skip() { while (i_ < s_.size() && is_blank(s_[i_])) ++i_; }
  std::int64_t comparison() {
    const std::int64_t a = sum();
    skip();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
      const std::string o = op;
      if (s_.compare(i_, o.size(), o) != 0) continue;
      i_ += o.size();
      const std::int64_t b = sum();
      return o == "<=" ? a <= b : o == ">=" ? a >= b : o == "==" ? a == b : o == "!=" ? a != b : o == "<" ? a < b : a > b;
    }
    return a;
  }
  std::int64_t sum() {
    std::int64_t v = product();
    for (skip(); i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'); skip()) {
      const char op = s_[i_++];
      const std::int64_t r = product();
      v = op == '+' ? v + r : v - r;
    }
    return v;
  }
  std::int64_t product() {
    std::int64_t v = atom();
    for (skip(); i_ < s_.size() && (s_[i_] == '*' || s_[i_] == '/' || s_[i_] == '%'); skip()) {
      const char op = s_[i_++];
      const std::int64_t r = atom();
      if (op != '*' && r == 0) throw std::domain_error("division by zero");
      v = op == '*' ? v * r : op == '/' ? v / r : v % r;
    }
    return v;
  }
  std::int64_t atom() {
    skip();
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      const std::int64_t v = sum();
      skip();
      if (i_ >= s_.size() || s_[i_] != ')') throw std::invalid_argument("unbalanced");
      ++i_;
      return v;
    }
    if (i_ < s_.size() && s_[i_] == '-') {
      ++i_;
      return -atom();
    }
    std::size_t used = 0;
    const std::int64_t v = std::stoll(s_.substr(i_), &used);
    i_ += used;
    return v;
  }

  std::string s_;
  std::size_t i_ = 0;
};

}  // namespace

// The fields of one word as they are built: `open` says whether out.back() still takes text.
struct Expander::Builder {
  std::vector<std::string> out;
  bool open = false;
  void text(const std::string& s) {
    if (!open) out.emplace_back(), open = true;
    out.back() += s;
  }
  void split(const std::string& s) {  // unquoted: blanks end fields
    if (!s.empty() && is_blank(s.front())) open = false;
    for (std::size_t i = 0; i < s.size();) {
      while (i < s.size() && is_blank(s[i])) ++i;
      const std::size_t start = i;
      while (i < s.size() && !is_blank(s[i])) ++i;
      if (i > start) {
        text(s.substr(start, i - start));
        if (i < s.size()) open = false;
      }
    }
    if (!s.empty() && is_blank(s.back())) open = false;
  }
};

std::vector<std::string> Expander::fields(const std::vector<Segment>& segs) {
  Builder b;
  bool quoted = false, elements = false;
  for (const Segment& seg : segs) {
    quoted = quoted || seg.quote != Quote::none;
    if (seg.quote == Quote::single) {
      b.text(seg.text);
      continue;
    }
    elements = elements || seg.text.find("[@]") != std::string::npos || seg.text.find("[*]") != std::string::npos;
    expand_segment(seg, b);
  }
  if (b.out.empty() && quoted && !elements) b.out.emplace_back();  // "" is one empty word
  return b.out;
}

std::optional<long long> Expander::arithmetic(const std::string& expr) {
  return Arithmetic(bare_names_expanded(joined(lex_whole_word(expr)))).value();
}

std::string Expander::joined(const std::vector<Segment>& segs) {
  std::string s;
  for (const std::string& f : fields(segs)) s += (s.empty() ? "" : " ") + f;
  return s;
}

void Expander::expand_segment(const Segment& seg, Builder& b) {
  const std::string& t = seg.text;
  const bool quoted = seg.quote == Quote::dbl;
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) b.text(literal), literal.clear();
  };
  for (std::size_t i = 0; i < t.size();) {
    if (quoted && t[i] == '\\' && i + 1 < t.size()) {
      literal += t[i + 1];
      i += 2;
    } else if (t[i] == '$' && i + 1 < t.size() &&
               (t[i + 1] == '{' || t[i + 1] == '(' || t[i + 1] == '#' || is_name_start(t[i + 1]) ||
                std::isdigit(static_cast<unsigned char>(t[i + 1])))) {
      flush();
      const Expansion e = dollar(t, i);
      for (std::size_t k = 0; k < e.values.size(); ++k) {
        if (k > 0) b.open = false;  // each element of an array is its own field
        if (quoted) b.text(e.values[k]); else b.split(e.values[k]);
      }
    } else {
      literal += t[i++];
    }
  }
  flush();
}

// Expands the $-expression at t[i] and advances i past it.
Expander::Expansion Expander::dollar(const std::string& t, std::size_t& i) {
  ++i;
  if (t[i] == '(') {
    ++i;
    const bool arith = t[i] == '(';
    std::string inner = read_balanced(t, i, '(', ')');
    if (arith) {
      inner = inner.substr(1, inner.size() >= 2 ? inner.size() - 2 : 0);
      const std::string expanded = bare_names_expanded(joined(lex_whole_word(inner)));
      if (auto v = Arithmetic(expanded).value()) return {{std::to_string(*v)}};
      note_unresolved("$((" + inner + "))");
      return {};
    }
    note_unresolved("$(" + inner + ")");
    return {};
  }
  if (t[i] == '{') {
    ++i;
    return braced(read_balanced(t, i, '{', '}'));
  }
  if (std::isdigit(static_cast<unsigned char>(t[i]))) return {lookup(std::string(1, t[i++]))};  // $1: a positional argument
  if (t[i] == '#') return ++i, Expansion{{"0"}};  // $#: an import passes the script no arguments
  const std::size_t start = i;
  while (i < t.size() && is_name_char(t[i])) ++i;
  const std::vector<std::string> v = lookup(t.substr(start, i - start));
  return {v.empty() ? v : std::vector<std::string>{v[0]}};  // $A is an array's first element
}

Expander::Expansion Expander::braced(const std::string& inside) {
  const bool length = !inside.empty() && inside[0] == '#';
  std::size_t n = length ? 1 : 0;
  while (n < inside.size() && is_name_char(inside[n])) ++n;
  const std::string name = inside.substr(length ? 1 : 0, n - (length ? 1 : 0));
  const std::string rest = inside.substr(n);
  auto it = vars_.find(name);
  if (length) {
    if (it == vars_.end()) return {{"0"}};
    return {{std::to_string(rest.empty() ? (it->second.empty() ? 0 : it->second[0].size()) : it->second.size())}};
  }
  if (rest == "[@]" || rest == "[*]") return {lookup(name), true};
  for (const char* op : {":-", ":=", ":+", "-", "=", "+"}) {
    const std::string o = op;
    if (rest.rfind(o, 0) != 0) continue;
    const bool unset = it == vars_.end() || (o[0] == ':' && (it->second.empty() || it->second[0].empty()));
    const std::string word = joined(lex_whole_word(rest.substr(o.size())));
    if (o.back() == '+') return unset ? Expansion{} : Expansion{{word}};
    if (!unset) return {{it->second.empty() ? "" : it->second[0]}};
    if (o.back() == '=') vars_[name] = {word};
    return {{word}};
  }
  if (!rest.empty()) {
    note_unresolved("${" + inside + "}");
    return {};
  }
  const std::vector<std::string> v = lookup(name);
  return {v.empty() ? v : std::vector<std::string>{v[0]}};
}

std::vector<std::string> Expander::lookup(const std::string& name) {
  auto it = vars_.find(name);
  if (it != vars_.end()) return it->second;
  note_unresolved("$" + name);
  return {};
}

// Inside $(( )) a bare name is its variable's value (0 when unset), as in bash.
std::string Expander::bare_names_expanded(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (!is_name_start(s[i])) {
      out += s[i++];
      continue;
    }
    const std::size_t start = i;
    while (i < s.size() && is_name_char(s[i])) ++i;
    const std::vector<std::string> v = lookup(s.substr(start, i - start));
    out += v.empty() || v[0].empty() ? "0" : v[0];
  }
  return out;
}

void Expander::note_unresolved(const std::string& what) {
  if (unresolved_) unresolved_->push_back(what);
}

}  // namespace clustersim::scenarios::importers::shell
