// The `clustersim` Python module: the same library calls as the CLI, returning Python objects.
//   clustersim.run(scenario, set=None, explain=False, strict=False) -> dict, the same object as `clustersim run --json`
//   clustersim.sweep(base, vary=None, auto_parallel=False, set=None, threads=0, as_frame=False, schedules=None)
//                                                       -> list of row dicts (or a pandas DataFrame)
//   clustersim.explain(scenario, set=None)              -> the `explain` object of `run --explain --json`
//   clustersim.validate(csv=None, source=None, group_by=None) -> dict, as `clustersim validate --json`
//   clustersim.plan(model, tokens, days, hardware=..., ..., strict=False) -> dict, as `clustersim plan --json`
//   clustersim.Error (alias ScenarioError, a ValueError) -> raised with the CLI's one-line message
// Every argument goes through the checks the CLI makes (tools/plan_request, tools/sweep_request):
// one validation path for both front ends. A scenario or plan that does not fit is a result
// (fits_in_memory / fits false, the CLI's exit code 3); strict=True raises Error instead.
// A scenario is a file path or a dict in the scenario format. The GIL is released while simulating.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware/csv.hpp"
#include "python/bindings.hpp"
#include "python/docstrings.hpp"
#include "tools/allocator_tuning.hpp"

namespace py = pybind11;

namespace {

// "key=value" overrides from a dict {key: value}; values written as YAML scalars (True -> true).
std::vector<std::string> overrides_of(const py::object& set) {
  std::vector<std::string> out;
  if (set.is_none()) return out;
  for (const auto& [k, v] : set.cast<py::dict>()) {
    std::string value;
    if (py::isinstance<py::bool_>(v)) value = v.cast<bool>() ? "true" : "false";
    else if (v.is_none()) value = "null";
    else value = py::str(v).cast<std::string>();
    out.push_back(py::str(k).cast<std::string>() + "=" + value);
  }
  return out;
}

// A path stays a path; a dict becomes scenario text (JSON is YAML) named "<dict>".
clustersim::python::ScenarioInput input_of(const py::object& scenario) {
  if (py::isinstance<py::str>(scenario)) return {scenario.cast<std::string>(), true};
  if (py::hasattr(scenario, "__fspath__")) return {py::str(scenario.attr("__fspath__")()).cast<std::string>(), true};
  if (!py::isinstance<py::dict>(scenario)) throw py::type_error("scenario: expected a file path or a dict");
  const py::object dumps = py::module_::import("json").attr("dumps");
  return {dumps(scenario, py::arg("indent") = 1).cast<std::string>(), false};
}

py::object json_loads(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

// A CSV cell as the Python value a user expects: int, float, bool, None for "", else the string.
py::object cell_value(const std::string& s) {
  if (s.empty()) return py::none();
  if (s == "true" || s == "false") return py::bool_(s == "true");
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (*end == '\0') return py::int_(i);
  const double d = std::strtod(s.c_str(), &end);
  if (*end == '\0') return py::float_(d);
  return py::str(s);
}

py::object run(const py::object& scenario, const py::object& set, bool explain, bool strict) {
  const auto in = input_of(scenario);
  const auto sets = overrides_of(set);
  std::string json;
  {
    py::gil_scoped_release release;
    json = clustersim::python::run_json(in, sets, explain, strict);
  }
  return json_loads(json);
}

// None, "1f1b,zb-h1" or a list of names, as the CLI's --schedules.
std::string schedule_list(const py::object& schedules) {
  if (schedules.is_none()) return "";
  if (py::isinstance<py::str>(schedules)) return schedules.cast<std::string>();
  std::string out;
  for (const auto& s : schedules) out += (out.empty() ? "" : ",") + py::str(s).cast<std::string>();
  return out;
}

py::object sweep(const py::object& base, const py::object& vary, bool auto_parallel, const py::object& set, int threads,
                 bool as_frame, const py::object& schedules) {
  const auto in = input_of(base);
  std::vector<std::string> axes;
  if (!vary.is_none())
    for (const auto& [k, v] : vary.cast<py::dict>()) {
      std::string values;
      if (py::isinstance<py::str>(v)) values = v.cast<std::string>();
      else
        for (const auto& item : v) values += (values.empty() ? "" : ",") + py::str(item).cast<std::string>();
      axes.push_back(py::str(k).cast<std::string>() + "=" + values);
    }
  const auto sets = overrides_of(set);
  const std::string schedule_text = schedule_list(schedules);
  clustersim::python::SweepTable table;
  {
    py::gil_scoped_release release;
    table = clustersim::python::sweep_table(in, axes, auto_parallel, sets, threads, schedule_text);
  }
  std::vector<py::str> keys;  // one key object per column, shared by every row's dict
  for (const auto& h : table.header) keys.emplace_back(h);
  py::list rows(table.rows.size());
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    py::dict row;
    for (std::size_t c = 0; c < keys.size(); ++c) row[keys[c]] = cell_value(table.rows[i][c]);
    rows[i] = std::move(row);
  }
  if (!as_frame) return rows;
  py::object pandas;
  try {
    pandas = py::module_::import("pandas");
  } catch (const py::error_already_set&) {
    throw py::import_error("as_frame=True needs pandas (apt-get install python3-pandas); as_frame=False returns a list of dicts");
  }
  return pandas.attr("DataFrame")(rows);
}

py::object explain(const py::object& scenario, const py::object& set) {
  return run(scenario, set, true, false)["explain"];
}

py::object validate(const py::object& csv, const py::object& source, const py::object& group_by) {
  const std::string c = csv.is_none() ? "" : py::str(csv).cast<std::string>();
  const std::string s = source.is_none() ? "" : py::str(source).cast<std::string>();
  const std::string g = group_by.is_none() ? "" : py::str(group_by).cast<std::string>();
  std::string json;
  {
    py::gil_scoped_release release;
    json = clustersim::python::validate_json(c, s, g);
  }
  return json_loads(json);
}

// None: the option's default; else the whole number given, checked as the CLI checks it.
std::optional<int> optional_int(const py::object& v) {
  if (v.is_none()) return std::nullopt;
  return v.cast<int>();
}

py::object plan(const std::string& model, const py::object& tokens, double days, const py::object& hardware, int seq_len,
                const py::object& global_batch, const py::object& cost_per_gpu_hour, const py::object& max_gpus,
                const py::object& gpu_step, const py::object& fix, long long top, int threads, const py::object& batch_tokens,
                double pue, double price_per_kwh, const py::object& node_overhead_w, double node_overhead_fraction,
                const std::string& by, int max_vpp, double confidence, const py::object& schedules, bool strict) {
  clustersim::python::PlanInput in;
  in.model = model;
  in.tokens = py::str(tokens).cast<std::string>();
  std::vector<std::string> hw;
  if (py::isinstance<py::str>(hardware)) hw = {hardware.cast<std::string>()};
  else
    for (const auto& h : hardware) hw.push_back(py::str(h).cast<std::string>());
  if (!hw.empty()) in.hardware = hw;
  in.days = days;
  in.seq_len = seq_len;
  in.global_batch = optional_int(global_batch);
  // A number (every hardware), "h100-sxm=2.5,gb200=6" or {"h100-sxm": 2.5, "gb200": 6}.
  if (py::isinstance<py::dict>(cost_per_gpu_hour)) {
    for (const auto& [name, price] : cost_per_gpu_hour.cast<py::dict>())
      in.prices += (in.prices.empty() ? "" : ",") + py::str(name).cast<std::string>() + "=" + py::str(price).cast<std::string>();
  } else if (py::isinstance<py::str>(cost_per_gpu_hour)) {
    in.prices = cost_per_gpu_hour.cast<std::string>();
  } else if (!cost_per_gpu_hour.is_none()) {
    in.cost_per_gpu_hour = cost_per_gpu_hour.cast<double>();
  }
  if (!batch_tokens.is_none()) in.batch_tokens = py::str(batch_tokens).cast<std::string>();
  // < 0 / None: the CLI's defaults (the EnergyOptions defaults).
  if (pue >= 0) in.energy.pue = pue;
  if (price_per_kwh >= 0) in.energy.price_per_kwh = price_per_kwh;
  if (!node_overhead_w.is_none()) in.energy.node_overhead_w = node_overhead_w.cast<double>();
  if (node_overhead_fraction >= 0) in.energy.node_overhead_fraction = node_overhead_fraction;
  in.by = by;
  in.max_vpp = max_vpp;
  if (!schedules.is_none()) in.schedules = schedule_list(schedules);
  in.confidence = confidence;
  in.max_gpus = optional_int(max_gpus);
  in.gpu_step = optional_int(gpu_step);
  in.fixes = overrides_of(fix);
  in.top = top;
  in.threads = threads;
  std::string json;
  {
    py::gil_scoped_release release;
    json = clustersim::python::plan_json(in, strict);
  }
  return json_loads(json);
}

}  // namespace

PYBIND11_MODULE(clustersim, m) {
  // As the CLI's main(): sweeps free and rebuild task graphs thousands of times a second; without this
  // glibc returns the memory and page-faults it back on every simulation (tools/allocator_tuning.hpp).
  clustersim::tools::keep_freed_memory_for_reuse();
  m.doc() = "clustersim: predicts step time, throughput, MFU and memory of large-model training";
  static py::exception<clustersim::scenarios::ScenarioError> scenario_error(m, "Error", PyExc_ValueError);
  m.attr("ScenarioError") = m.attr("Error");  // the name before issue 31
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const clustersim::scenarios::ScenarioError& e) {
      scenario_error(e.what());
    } catch (const clustersim::hardware::CsvError& e) {  // a malformed CSV file: the same one-line error
      scenario_error(e.what());
    }
  });
  m.attr("__version__") = clustersim::python::version();
  m.def("run", &run, py::arg("scenario"), py::arg("set") = py::none(), py::arg("explain") = false,
        py::arg("strict") = false, clustersim::python::doc::run());
  m.def("sweep", &sweep, py::arg("base"), py::arg("vary") = py::none(), py::arg("auto_parallel") = false,
        py::arg("set") = py::none(), py::arg("threads") = 0, py::arg("as_frame") = false, py::arg("schedules") = py::none(),
        clustersim::python::doc::sweep().c_str());
  m.def("explain", &explain, py::arg("scenario"), py::arg("set") = py::none(),
        clustersim::python::doc::explain());
  m.def("validate", &validate, py::arg("csv") = py::none(), py::arg("source") = py::none(),
        py::arg("group_by") = py::none(),
        clustersim::python::doc::validate());
  m.def("plan", &plan, py::arg("model"), py::arg("tokens"), py::arg("days"), py::arg("hardware") = "h100-sxm",
        py::arg("seq_len") = 4096, py::arg("global_batch") = py::none(), py::arg("cost_per_gpu_hour") = 0.0,
        py::arg("max_gpus") = py::none(), py::arg("gpu_step") = py::none(), py::arg("fix") = py::none(), py::arg("top") = 10, py::arg("threads") = 0,
        py::arg("batch_tokens") = py::none(), py::arg("pue") = -1.0, py::arg("price_per_kwh") = -1.0,
        py::arg("node_overhead_w") = py::none(), py::arg("node_overhead_fraction") = -1.0, py::arg("by") = "cost",
        py::arg("max_vpp") = 8, py::arg("confidence") = 0.0, py::arg("schedules") = py::none(), py::arg("strict") = false,
        clustersim::python::doc::plan().c_str());
}
