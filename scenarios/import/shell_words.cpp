#include "scenarios/import/shell_words.hpp"

#include <fmt/format.h>

#include <optional>

#include "scenarios/import/shell_condition.hpp"
#include "scenarios/import/shell_expand.hpp"
#include "scenarios/import/shell_lexer.hpp"

namespace clustersim::scenarios::importers {
namespace {

using shell::Token;
using shell::TokenKind;

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// NAME=, NAME+= at the start of a word: the variable name and where the value starts.
std::optional<std::pair<std::string, std::size_t>> assignment_target(const Token& t) {
  if (t.kind != TokenKind::word || t.segments.empty() || t.segments[0].quote != shell::Quote::none) return std::nullopt;
  const std::string& s = t.segments[0].text;
  if (s.empty() || !is_name_start(s[0])) return std::nullopt;
  std::size_t n = 1;
  while (n < s.size() && is_name_char(s[n])) ++n;
  if (n < s.size() && s[n] == '=') return std::make_pair(s.substr(0, n), n + 1);
  if (n + 1 < s.size() && s[n] == '+' && s[n + 1] == '=') return std::make_pair(s.substr(0, n), n + 2);
  return std::nullopt;
}

bool is_declaration_word(const Token& t) {
  const std::string s = t.bare();
  return s == "export" || s == "declare" || s == "local" || s == "readonly" || s == "typeset" ||
         (s.size() > 1 && s[0] == '-' && s.find_first_not_of("-aAxrgi") == std::string::npos);
}

ShellWords read_script(const std::string& text, const std::map<std::string, std::vector<std::string>>& vars,
                       std::vector<std::string>* unresolved);

// Walks the tokens command by command, keeping the words and assignments of the branches taken.
class Reader {
 public:
  Reader(const std::vector<Token>& tokens, ShellWords& out, std::vector<std::string>* unresolved)
      : t_(tokens), out_(out), ex_(out.vars, unresolved), unresolved_(unresolved) {}

  void run() {
    bool start = true;
    for (i_ = 0; i_ < t_.size(); ++i_) {
      const Token& t = t_[i_];
      if (t.kind == TokenKind::separator) { start = true; continue; }
      if (t.kind != TokenKind::word) continue;
      if (start && keyword(t.bare())) continue;
      if (start && is_declaration_word(t)) continue;
      if (auto target = start ? assignment_target(t) : std::nullopt) {
        assign(target->first, target->second);
        continue;  // a prefix assignment (`A=1 cmd`) leaves the command to start at the next word
      }
      const bool first = start;
      start = false;
      if (!active()) {
        if (!t.segments.empty() && t.segments[0].text.rfind("--", 0) == 0) mattered();
        continue;
      }
      for (auto& f : ex_.fields(t.segments)) word(std::move(f), first);
    }
  }

 private:
  // A word of an active command; the string of `bash -c STRING` is read as a script, as bash runs it.
  void word(std::string f, bool first) {
    if (first) shell_ = false;  // `bash -c` may follow a launcher: srun … bash -c "…"
    if (f == "bash" || f == "sh" || f.ends_with("/bash") || f.ends_with("/sh")) shell_ = true;
    if (script_next_) {
      script_next_ = false;
      const ShellWords inner = read_script(f, out_.vars, unresolved_);
      out_.words.insert(out_.words.end(), inner.words.begin(), inner.words.end());
      out_.notes.insert(out_.notes.end(), inner.notes.begin(), inner.notes.end());
      return;
    }
    if (shell_ && f == "-c") script_next_ = true;
    out_.words.push_back(std::move(f));
  }

  struct Branch {
    bool parent_active = true;
    bool taken = false;   // a branch of this if has been chosen
    bool active = false;  // the current branch is being read
    int line = 0;         // of an unknown condition being skipped; 0 = none
    std::string what;     // that condition and why it is unknown
    bool mattered = false;
  };

  bool active() const { return stack_.empty() || stack_.back().active; }
  void mattered() {
    if (!stack_.empty()) stack_.back().mattered = true;
  }

  // if/elif/else/fi at the start of a command; true when the token was one.
  bool keyword(const std::string& k) {
    if (k == "if" || k == "while" || k == "until") {
      Branch b;
      b.parent_active = active();
      stack_.push_back(b);
      condition(k == "if" ? "then" : "do", k == "until");
    } else if (k == "for") {
      Branch b;  // the body is read once, with the variable at its first value; the header's words are not the program's
      b.parent_active = active();
      b.active = b.taken = b.parent_active;
      stack_.push_back(b);
      if (b.active && i_ + 3 < t_.size() && t_[i_ + 2].bare() == "in" && t_[i_ + 3].kind == TokenKind::word) {
        const auto first = ex_.fields(t_[i_ + 3].segments);
        if (!first.empty()) out_.vars[t_[i_ + 1].bare()] = {first[0]};
      }
      while (i_ + 1 < t_.size() && !(t_[i_ + 1].bare() == "do" && t_[i_].kind == TokenKind::separator)) ++i_;
      ++i_;
    } else if (k == "elif" && !stack_.empty()) {
      close_unknown();
      condition("then", false);
    } else if (k == "else" && !stack_.empty()) {
      close_unknown();
      Branch& b = stack_.back();
      b.active = b.parent_active && !b.taken;
    } else if ((k == "fi" || k == "done") && !stack_.empty()) {
      close_unknown();
      stack_.pop_back();
    } else {
      return k == "then" || k == "do";
    }
    return true;
  }

  // Reads the condition after if/elif (up to `then`) or while/until (up to `do`) and chooses the branch: a
  // loop's body is read once when its condition holds at the start, as a script run without arguments
  // skips `while [[ $# -gt 0 ]]`.
  void condition(const char* end, bool negate) {
    Branch& b = stack_.back();
    const int line = t_[i_].line;
    std::vector<std::string> items;
    std::string text;
    for (++i_; i_ < t_.size(); ++i_) {
      const Token& t = t_[i_];
      if (t.kind == TokenKind::word && t.bare() == end && i_ > 0 && t_[i_ - 1].kind == TokenKind::separator) break;
      if (t.kind == TokenKind::open_paren && i_ + 1 < t_.size() && t_[i_ + 1].kind == TokenKind::open_paren) {
        items.push_back(arithmetic_test(text));  // (( … )): true or false as its value is non-zero
        continue;
      }
      if (t.kind == TokenKind::separator && (t.op == "&&" || t.op == "||")) items.push_back(t.op);
      if (t.kind == TokenKind::word && b.parent_active && !b.taken)
        for (auto& f : ex_.fields(t.segments)) items.push_back(std::move(f));
      if (t.kind != TokenKind::separator || t.op == "&&" || t.op == "||") text += (text.empty() ? "" : " ") + raw(t);
    }
    if (!b.parent_active || b.taken) {
      b.active = false;
      return;
    }
    shell::Truth truth = shell::evaluate_condition(items);
    if (negate && truth.value) truth.value = !*truth.value;
    b.active = truth.value.value_or(false);
    b.taken = b.active;
    if (!truth.value) b.line = line, b.what = fmt::format("`{}` ({})", text, truth.why), b.mattered = false;
  }

  // Reads `(( expr ))` from its first parenthesis; "true", "false", or the text itself when it is not integer
  // arithmetic (an unknown command to the condition).
  std::string arithmetic_test(std::string& text) {
    std::string expr;
    for (i_ += 2; i_ < t_.size() && !(t_[i_].kind == TokenKind::close_paren && i_ + 1 < t_.size() &&
                                     t_[i_ + 1].kind == TokenKind::close_paren); ++i_)
      expr += (expr.empty() ? "" : " ") + raw(t_[i_]);
    ++i_;  // the second closing parenthesis
    text += (text.empty() ? "" : " ") + ("((" + expr + "))");
    const auto v = ex_.arithmetic(expr);
    return v ? (*v != 0 ? "true" : "false") : "((" + expr + "))";
  }

  // Ends the branch skipped for an unknown condition, noting it if it held flags or assignments.
  void close_unknown() {
    Branch& b = stack_.back();
    if (b.line > 0 && b.mattered)
      out_.notes.push_back(fmt::format("line {}: condition {} cannot be evaluated without running the script: read as "
                                       "false, its branch skipped", b.line, b.what));
    b.line = 0;
  }

  static std::string raw(const Token& t) {
    if (t.kind != TokenKind::word) return t.op;
    std::string s;
    for (const auto& seg : t.segments)
      s += seg.quote == shell::Quote::single ? "'" + seg.text + "'" : seg.quote == shell::Quote::dbl ? "\"" + seg.text + "\"" : seg.text;
    return s;
  }

  void assign(const std::string& name, std::size_t at) {
    const Token& t = t_[i_];
    const bool append = at >= 2 && t.segments[0].text[at - 2] == '+';
    std::vector<shell::Segment> value_segs = t.segments;
    value_segs[0].text = value_segs[0].text.substr(at);
    std::vector<std::string> value;
    if (value_segs.size() == 1 && value_segs[0].text.empty() && i_ + 1 < t_.size() &&
        t_[i_ + 1].kind == TokenKind::open_paren) {  // NAME=( … ): an array, possibly over several lines
      for (i_ += 2; i_ < t_.size() && t_[i_].kind != TokenKind::close_paren; ++i_)
        if (t_[i_].kind == TokenKind::word && active())
          for (auto& f : ex_.fields(t_[i_].segments)) value.push_back(std::move(f));
    } else if (active()) {
      value = {ex_.joined(value_segs)};
    }
    if (!active()) return mattered();
    auto& slot = out_.vars[name];
    if (append) slot.insert(slot.end(), value.begin(), value.end()); else slot = std::move(value);
  }

  const std::vector<Token>& t_;
  ShellWords& out_;
  shell::Expander ex_;
  std::vector<Branch> stack_;
  std::size_t i_ = 0;
  std::vector<std::string>* unresolved_;
  bool shell_ = false, script_next_ = false;
};

ShellWords read_script(const std::string& text, const std::map<std::string, std::vector<std::string>>& vars,
                       std::vector<std::string>* unresolved) {
  std::string joined;  // line continuations removed
  std::vector<int> lines;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') { ++i, ++line; continue; }
    if (text[i] == '\\' && i + 2 < text.size() && text[i + 1] == '\r' && text[i + 2] == '\n') { i += 2, ++line; continue; }
    joined += text[i];
    lines.push_back(line);
    if (text[i] == '\n') ++line;
  }
  const std::vector<Token> tokens = shell::lex(joined, lines);
  ShellWords out;
  out.vars = vars;
  Reader(tokens, out, unresolved).run();
  return out;
}

}  // namespace

ShellWords read_shell_words(const std::string& text, const std::map<std::string, std::string>& env,
                            std::vector<std::string>* unresolved) {
  std::map<std::string, std::vector<std::string>> vars;
  for (const auto& [k, v] : env) vars[k] = {v};
  return read_script(text, vars, unresolved);
}

}  // namespace clustersim::scenarios::importers
