#pragma once
// JSON documents for every writer: nlohmann::ordered_json values (members in the order written),
// serialized by the library. Numbers go through json_number_value so the text keeps one format
// run to run: null where not finite (JSON has no NaN or infinity), an exact integer where whole
// (a count of parameters, bytes, tokens is never rounded: 7.05537065e+10 lost the parameter
// count), else the value at 10 significant digits (the library then prints its shortest form).
#include <nlohmann/json.hpp>

#include <string>

namespace clustersim::studies {

using Json = nlohmann::ordered_json;

Json json_number_value(double v, int significant_digits = 10);
/// A count of bytes: a whole number (a model's fractional bytes rounded to the nearest byte).
Json json_bytes_value(double v);
/// A table cell (sweep and plan rows hold text): null when empty, a number when the cell is a JSON
/// number (its value; "1e12" is written 1000000000000), else the text.
Json json_cell_value(const std::string& cell);
/// `text` as a JSON string literal, quoted and escaped by the library (for writers that stream
/// fixed-shape lines, e.g. the trace's events).
std::string json_string(const std::string& text);
/// Two-space indented (pretty) or on one line; bytes that are not UTF-8 become U+FFFD rather than
/// an exception (a scenario name is the user's text).
std::string json_dump(const Json& j, bool pretty = true);

}  // namespace clustersim::studies
