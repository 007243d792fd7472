#include "scenarios/import/shell_lexer.hpp"

namespace clustersim::scenarios::importers::shell {
namespace {

class Lexer {
 public:
  Lexer(const std::string& text, const std::vector<int>& lines, bool whole) : text_(text), lines_(lines), whole_(whole) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    while (i_ < text_.size()) {
      const char c = text_[i_];
      const int line = line_at(i_);
      if (c == '\n' || c == ';' || c == '|' || c == '&') {
        std::string op(1, c);
        if (c != '\n' && i_ + 1 < text_.size() && text_[i_ + 1] == c) op += c;
        i_ += op.size();
        out.push_back({TokenKind::separator, {}, op, line});
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') ++i_;
      } else if (c == '(' || c == ')') {
        out.push_back({c == '(' ? TokenKind::open_paren : TokenKind::close_paren, {}, std::string(1, c), line});
        ++i_;
      } else {
        out.push_back({TokenKind::word, word(), "", line});
      }
    }
    return out;
  }

  // One word: unquoted, '…' and "…" parts glued together; $(…), ${…} and `…` kept whole.
  std::vector<Segment> word() {
    std::vector<Segment> segs;
    auto append = [&](Quote q, const std::string& s) {
      if (segs.empty() || segs.back().quote != q) segs.push_back({"", q});
      segs.back().text += s;
    };
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (!whole_ && std::string(" \t\r\n;|&()").find(c) != std::string::npos) break;
      if (c == '\'') {
        const std::size_t end = text_.find('\'', i_ + 1);
        append(Quote::single, text_.substr(i_ + 1, (end == std::string::npos ? text_.size() : end) - i_ - 1));
        i_ = end == std::string::npos ? text_.size() : end + 1;
      } else if (c == '"') {
        append(Quote::dbl, double_quoted());
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

 private:
  // "…" from its opening quote: backslash escapes kept for the expander, which drops them.
  std::string double_quoted() {
    ++i_;
    std::string s;
    while (i_ < text_.size() && text_[i_] != '"') {
      if (text_[i_] == '\\' && i_ + 1 < text_.size() && std::string("\"\\$`").find(text_[i_ + 1]) != std::string::npos) {
        s += '\\';
        s += text_[i_ + 1];
        i_ += 2;
      } else if (text_[i_] == '$' && i_ + 1 < text_.size() && (text_[i_ + 1] == '(' || text_[i_ + 1] == '{')) {
        s += dollar_group();
      } else {
        s += text_[i_++];
      }
    }
    ++i_;
    return s;
  }

  std::string dollar_group() {
    const char open = text_[i_ + 1];
    const char close = open == '(' ? ')' : '}';
    i_ += 2;
    return std::string("$") + open + read_balanced(text_, i_, open, close) + close;
  }

  int line_at(std::size_t i) const { return i < lines_.size() ? lines_[i] : (lines_.empty() ? 1 : lines_.back()); }

  const std::string& text_;
  const std::vector<int>& lines_;
  bool whole_;
  std::size_t i_ = 0;
};

}  // namespace

std::string Token::bare() const {
  return kind == TokenKind::word && segments.size() == 1 && segments[0].quote == Quote::none ? segments[0].text : "";
}

std::string read_balanced(const std::string& text, std::size_t& i, char open, char close) {
  int depth = 1;
  const std::size_t start = i;
  for (; i < text.size(); ++i) {
    if (text[i] == open) ++depth;
    if (text[i] == close && --depth == 0) return text.substr(start, i++ - start);
  }
  return text.substr(start);
}

std::vector<Token> lex(const std::string& text, const std::vector<int>& lines) { return Lexer(text, lines, false).tokens(); }

std::vector<Segment> lex_whole_word(const std::string& text) {
  const std::vector<int> none;
  return Lexer(text, none, true).word();
}

}  // namespace clustersim::scenarios::importers::shell
