#include "scenarios/import/shell_words.hpp"

#include <cctype>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace clustersim::scenarios::importers {
namespace {

enum class Quote { none, single, dbl };
struct Segment {
  std::string text;
  Quote quote = Quote::none;
};
enum class TokenKind { word, separator, open_paren, close_paren };
struct Token {
  TokenKind kind = TokenKind::word;
  std::vector<Segment> segments;
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Reads from text[i] (just after an opening `open`) to the matching `close`, nesting; returns the inside.
std::string read_balanced(const std::string& text, std::size_t& i, char open, char close) {
  int depth = 1;
  const std::size_t start = i;
  for (; i < text.size(); ++i) {
    if (text[i] == open) ++depth;
    if (text[i] == close && --depth == 0) return text.substr(start, i++ - start);
  }
  return text.substr(start);
}

class Lexer {
 public:
  explicit Lexer(std::string text) : text_(std::move(text)) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '\n' || c == ';' || c == '|' || c == '&') {
        out.push_back({TokenKind::separator, {}});
        ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') ++i_;
      } else if (c == '(' || c == ')') {
        out.push_back({c == '(' ? TokenKind::open_paren : TokenKind::close_paren, {}});
        ++i_;
      } else {
        out.push_back({TokenKind::word, word()});
      }
    }
    return out;
  }

 private:
  // One word: unquoted, '…' and "…" parts glued together; $(…), ${…} and `…` kept whole.
  std::vector<Segment> word() {
    std::vector<Segment> segs;
    auto append = [&](Quote q, const std::string& s) {
      if (segs.empty() || segs.back().quote != q) segs.push_back({"", q});
      segs.back().text += s;
    };
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (std::string(" \t\r\n;|&()").find(c) != std::string::npos) break;
      if (c == '\'') {
        const std::size_t end = text_.find('\'', i_ + 1);
        append(Quote::single, text_.substr(i_ + 1, (end == std::string::npos ? text_.size() : end) - i_ - 1));
        i_ = end == std::string::npos ? text_.size() : end + 1;
      } else if (c == '"') {
        ++i_;
        std::string s;
        while (i_ < text_.size() && text_[i_] != '"') {
          if (text_[i_] == '\\' && i_ + 1 < text_.size() && std::string("\"\\$`").find(text_[i_ + 1]) != std::string::npos) {
            s += '\\';  // kept for the expander, which drops it
            s += text_[i_ + 1];
            i_ += 2;
          } else if (text_[i_] == '$' && i_ + 1 < text_.size() && (text_[i_ + 1] == '(' || text_[i_ + 1] == '{')) {
            s += dollar_group();
          } else {
            s += text_[i_++];
          }
        }
        ++i_;
        append(Quote::dbl, s);
      } else if (c == '\\' && i_ + 1 < text_.size()) {
        append(Quote::single, std::string(1, text_[i_ + 1]));
        i_ += 2;
      } else if (c == '$' && i_ + 1 < text_.size() && (text_[i_ + 1] == '(' || text_[i_ + 1] == '{')) {
        append(Quote::none, dollar_group());
      } else if (c == '`') {
        const std::size_t end = text_.find('`', i_ + 1);
        append(Quote::none, "$(" + text_.substr(i_ + 1, (end == std::string::npos ? text_.size() : end) - i_ - 1) + ")");
        i_ = end == std::string::npos ? text_.size() : end + 1;
      } else {
        append(Quote::none, std::string(1, c));
        ++i_;
      }
    }
    return segs;
  }

  std::string dollar_group() {
    const char open = text_[i_ + 1];
    const char close = open == '(' ? ')' : '}';
    i_ += 2;
    return std::string("$") + open + read_balanced(text_, i_, open, close) + close;
  }

  std::string text_;
  std::size_t i_ = 0;
};

// Integer arithmetic of $(( … )): + - * / % and parentheses over integers (variables already expanded).
class Arithmetic {
 public:
  explicit Arithmetic(std::string s) : s_(std::move(s)) {}
  std::optional<std::int64_t> value() {
    try {
      const std::int64_t v = sum();
      skip();
      if (i_ != s_.size()) return std::nullopt;
      return v;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

 private:
  void skip() { while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_; }
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

class Expander {
 public:
  Expander(std::map<std::string, std::vector<std::string>>& vars, std::vector<std::string>* unresolved)
      : vars_(vars), unresolved_(unresolved) {}

  // The fields a word expands to (unquoted expansions split on blanks; arrays give one field each).
  std::vector<std::string> fields(const std::vector<Segment>& segs) {
    std::vector<std::string> out;
    bool open = false;  // whether out.back() is still being built
    auto add_text = [&](const std::string& s) {
      if (!open) out.emplace_back(), open = true;
      out.back() += s;
    };
    auto add_split = [&](const std::string& s) {
      std::size_t i = 0;
      const bool leading_blank = !s.empty() && std::isspace(static_cast<unsigned char>(s[0]));
      if (leading_blank) open = false;
      while (i < s.size()) {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
        const std::size_t start = i;
        while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
        if (i > start) {
          add_text(s.substr(start, i - start));
          open = i >= s.size() ? open : false;
        }
      }
      if (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) open = false;
    };
    for (const Segment& seg : segs) {
      if (seg.quote == Quote::single) {
        add_text(seg.text);
        continue;
      }
      expand_segment(seg, add_text, add_split, out, open);
    }
    return out;
  }

  std::string joined(const std::vector<Segment>& segs) {
    std::string s;
    for (const std::string& f : fields(segs)) s += (s.empty() ? "" : " ") + f;
    return s;
  }

 private:
  template <class AddText, class AddSplit>
  void expand_segment(const Segment& seg, AddText& add_text, AddSplit& add_split, std::vector<std::string>& out,
                      bool& open) {
    const std::string& t = seg.text;
    const bool quoted = seg.quote == Quote::dbl;
    std::string literal;
    auto flush = [&] {
      if (!literal.empty()) add_text(literal), literal.clear();
    };
    for (std::size_t i = 0; i < t.size();) {
      if (quoted && t[i] == '\\' && i + 1 < t.size()) {
        literal += t[i + 1];
        i += 2;
      } else if (t[i] == '$' && i + 1 < t.size() && (t[i + 1] == '{' || t[i + 1] == '(' || is_name_start(t[i + 1]))) {
        flush();
        std::vector<std::string> value = dollar(t, i);
        if (value.size() > 1) {  // an array: one field per element
          for (std::size_t k = 0; k < value.size(); ++k) {
            if (k > 0) open = false;
            add_text(value[k]);
          }
        } else if (!value.empty()) {
          if (quoted) add_text(value[0]); else add_split(value[0]);
        }
      } else {
        literal += t[i++];
      }
    }
    flush();
    (void)out;
  }

  // Expands the $-expression at t[i] and advances i past it.
  std::vector<std::string> dollar(const std::string& t, std::size_t& i) {
    ++i;
    if (t[i] == '(') {
      ++i;
      const bool arith = t[i] == '(';
      std::string inner = read_balanced(t, i, '(', ')');
      if (arith) {
        inner = inner.substr(1, inner.size() >= 2 ? inner.size() - 2 : 0);
        const std::string expanded = bare_names_expanded(expand_plain(inner));
        if (auto v = Arithmetic(expanded).value()) return {std::to_string(*v)};
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
    const std::size_t start = i;
    while (i < t.size() && is_name_char(t[i])) ++i;
    return lookup(t.substr(start, i - start));
  }

  std::vector<std::string> braced(const std::string& inside) {
    std::size_t n = 0;
    while (n < inside.size() && is_name_char(inside[n])) ++n;
    const std::string name = inside.substr(0, n);
    const std::string rest = inside.substr(n);
    if (rest == "[@]" || rest == "[*]") return lookup(name);
    for (const char* op : {":-", "-", ":=", "="}) {
      const std::string o = op;
      if (rest.rfind(o, 0) == 0) {
        auto it = vars_.find(name);
        const bool empty = it == vars_.end() || (o[0] == ':' && (it->second.empty() || it->second[0].empty()));
        if (!empty) return it->second;
        const std::string def = expand_plain(rest.substr(o.size()));
        if (o.back() == '=') vars_[name] = {def};
        return {def};
      }
    }
    if (!rest.empty()) {
      note_unresolved("${" + inside + "}");
      return {};
    }
    return lookup(name);
  }

  std::vector<std::string> lookup(const std::string& name) {
    auto it = vars_.find(name);
    if (it != vars_.end()) return it->second;
    note_unresolved("$" + name);
    return {};
  }

  std::string expand_plain(const std::string& s) { return joined({Segment{s, Quote::dbl}}); }

  // Inside $(( )) a bare name is its variable's value (0 when unset), as in bash.
  std::string bare_names_expanded(const std::string& s) {
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

  void note_unresolved(const std::string& what) {
    if (unresolved_) unresolved_->push_back(what);
  }

  std::map<std::string, std::vector<std::string>>& vars_;
  std::vector<std::string>* unresolved_;
};

// NAME=, NAME+= at the start of a word: the variable name and where the value starts.
std::optional<std::pair<std::string, std::size_t>> assignment_target(const Token& t) {
  if (t.kind != TokenKind::word || t.segments.empty() || t.segments[0].quote != Quote::none) return std::nullopt;
  const std::string& s = t.segments[0].text;
  if (s.empty() || !is_name_start(s[0])) return std::nullopt;
  std::size_t n = 1;
  while (n < s.size() && is_name_char(s[n])) ++n;
  if (n < s.size() && s[n] == '=') return std::make_pair(s.substr(0, n), n + 1);
  if (n + 1 < s.size() && s[n] == '+' && s[n + 1] == '=') return std::make_pair(s.substr(0, n), n + 2);
  return std::nullopt;
}

bool is_declaration_word(const Token& t) {
  if (t.kind != TokenKind::word || t.segments.size() != 1 || t.segments[0].quote != Quote::none) return false;
  const std::string& s = t.segments[0].text;
  return s == "export" || s == "declare" || s == "local" || s == "readonly" || s == "typeset" ||
         (s.size() > 1 && s[0] == '-' && s.find_first_not_of("-aAxrgi") == std::string::npos);
}

}  // namespace

ShellWords read_shell_words(const std::string& text, const std::map<std::string, std::string>& env,
                            std::vector<std::string>* unresolved) {
  std::string joined;  // line continuations removed
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') { ++i; continue; }
    if (text[i] == '\\' && i + 2 < text.size() && text[i + 1] == '\r' && text[i + 2] == '\n') { i += 2; continue; }
    joined += text[i];
  }
  const std::vector<Token> tokens = Lexer(joined).tokens();
  ShellWords out;
  for (const auto& [k, v] : env) out.vars[k] = {v};
  Expander ex(out.vars, unresolved);
  bool command_start = true;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.kind == TokenKind::separator) { command_start = true; continue; }
    if (t.kind != TokenKind::word) continue;
    if (command_start && is_declaration_word(t)) continue;
    if (auto target = command_start ? assignment_target(t) : std::nullopt) {
      auto [name, at] = *target;
      const bool append = t.segments[0].text[at - 1] == '=' && at >= 2 && t.segments[0].text[at - 2] == '+';
      std::vector<Segment> value_segs = t.segments;
      value_segs[0].text = value_segs[0].text.substr(at);
      std::vector<std::string> value;
      if (value_segs.size() == 1 && value_segs[0].text.empty() && i + 1 < tokens.size() &&
          tokens[i + 1].kind == TokenKind::open_paren) {  // NAME=( … ): an array, possibly over several lines
        for (i += 2; i < tokens.size() && tokens[i].kind != TokenKind::close_paren; ++i)
          if (tokens[i].kind == TokenKind::word)
            for (auto& f : ex.fields(tokens[i].segments)) value.push_back(std::move(f));
      } else {
        value = {ex.joined(value_segs)};
      }
      auto& slot = out.vars[name];
      if (append) slot.insert(slot.end(), value.begin(), value.end()); else slot = std::move(value);
      continue;  // a prefix assignment (`A=1 cmd`) leaves the command to start at the next word
    }
    command_start = false;
    for (auto& f : ex.fields(t.segments)) out.words.push_back(std::move(f));
  }
  return out;
}

}  // namespace clustersim::scenarios::importers
