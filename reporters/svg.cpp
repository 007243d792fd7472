#include "reporters/svg.hpp"

#include <fmt/format.h>

namespace clustersim::reporters {

std::string svg_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else o += c;
  }
  return o;
}

std::string svg_open(double width, double height) {
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
                     "font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                     width, height);
}

std::string svg_close() { return "</svg>\n"; }

std::string svg_escape_attribute(const std::string& s) {
  std::string o;
  for (char c : svg_escape(s)) o += c == '"' ? std::string("&quot;") : std::string(1, c);
  return o;
}

std::string svg_inline(std::string svg) {
  const std::string ns = " xmlns=\"http://www.w3.org/2000/svg\"";
  if (const auto at = svg.find(ns); at != std::string::npos) svg.erase(at, ns.size());
  return svg;
}

}  // namespace clustersim::reporters
