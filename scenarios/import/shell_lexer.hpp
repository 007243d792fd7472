#pragma once
// The tokens of a bash script as the importer reads them: words made of quoted and unquoted parts,
// command separators (newline ; ;; | & || &&) and parentheses, each with the line it starts on.
#include <string>
#include <vector>

namespace clustersim::scenarios::importers::shell {

enum class Quote { none, single, dbl };
struct Segment {
  std::string text;
  Quote quote = Quote::none;
};
enum class TokenKind { word, separator, open_paren, close_paren };
struct Token {
  TokenKind kind = TokenKind::word;
  std::vector<Segment> segments;  ///< a word's parts
  std::string op;                 ///< a separator's text ("\n", ";", "&&", "||", …)
  int line = 1;

  /// The word as written when it is one unquoted part (a keyword such as `if`), else "".
  std::string bare() const;
};

/// The tokens of `text` (line continuations already removed); `lines[i]` is the line of text[i].
std::vector<Token> lex(const std::string& text, const std::vector<int>& lines);
/// `text` read as one word (blanks kept), e.g. the default of ${V:-"x y"}.
std::vector<Segment> lex_whole_word(const std::string& text);
/// Reads from text[i] (just after an opening `open`) to the matching `close`, nesting; returns the inside.
std::string read_balanced(const std::string& text, std::size_t& i, char open, char close);

}  // namespace clustersim::scenarios::importers::shell
