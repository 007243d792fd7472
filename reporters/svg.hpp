#pragma once
// The one SVG helper every chart uses (the MFU waterfall, sweep plots, validation scatter):
// the document frame and XML escaping of text.
#include <string>

namespace clustersim::reporters {

/// Text with <, > and & escaped for an SVG text node or attribute.
std::string svg_escape(const std::string& s);
/// `<svg …>` of the given size (sans-serif 12 px) and a white background.
std::string svg_open(double width, double height);
/// `</svg>` and a newline.
std::string svg_close();
/// Text escaped for a double-quoted attribute (svg_escape plus the quote).
std::string svg_escape_attribute(const std::string& s);
/// A standalone chart made embeddable in HTML, where the SVG namespace is implied: drops the
/// xmlns attribute so that an inline report holds no URL at all.
std::string svg_inline(std::string svg);

}  // namespace clustersim::reporters
