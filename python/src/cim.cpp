// The CIM C models from Python: a macro (MacroSpec, Macro, MacroEvents) and the attention tile
// (TileParams, QueryScale, CModelTile, TileResult, TileEvents), plus cosim(): random attention
// problems run on the C model and on the Verilated RTL tile, compared bit for bit (only in builds
// with the RTL). Names are the C++ ones; events come back as dicts of the C++ field names.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>


#include "bindings.hpp"
#include "spec_fields.hpp"
#include "kvcim/runtime/defaults.hpp"
#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/cmodel/cim/attention_tile_analog.hpp"
#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/error.hpp"
#include "kvcim/rtl/cosim_job.hpp"  // (its defaults are the Python signature's, with the RTL or not)
#ifdef KVCIM_HAVE_RTL
#include "kvcim/rtl/rtl_tile.hpp"
#include "kvcim/rtl/rtl_tiles.hpp"
#endif

namespace kvcim::python {

using namespace kvcim::cmodel::cim;

namespace {

py::dict tile_result_dict(const TileResult& r) {
  py::dict d;
  d["o"] = r.o;
  d["evmax"] = r.evmax;
  d["ymax"] = r.ymax;
  d["sum"] = r.sum;
  return d;
}

// Python ints -> int8 with a kvcim.Error naming the argument (instead of a TypeError from the
// caster) when a value does not fit.
std::vector<int8_t> int8_values(const std::vector<long long>& values, const std::string& where,
                                const std::string& field) {
  std::vector<int8_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < -128 || values[i] > 127)
      fail(where, field + "[" + std::to_string(i) + "]", std::to_string(values[i]),
           "expected a signed 8-bit integer");
    out[i] = static_cast<int8_t>(values[i]);
  }
  return out;
}

std::vector<int32_t> int32_values(const std::vector<long long>& values, const std::string& where,
                                  const std::string& field) {
  std::vector<int32_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < INT32_MIN || values[i] > INT32_MAX)
      fail(where, field + "[" + std::to_string(i) + "]", std::to_string(values[i]),
           "expected a 32-bit integer");
    out[i] = static_cast<int32_t>(values[i]);
  }
  return out;
}

}  // namespace

namespace {

// The AttentionTile methods, bound alike on each tile class (`name` in their errors).
template <class Tile>
void bind_tile(py::class_<Tile>& c, const std::string& name) {
  c.def_property_readonly("params", &Tile::params)
      .def("reset", &Tile::reset)
      .def(
          "append",
          [name](Tile& t, const std::vector<long long>& k, const std::vector<long long>& v, int ek, int ev) {
            const auto kb = int8_values(k, name + ".append", "k");
            const auto vb = int8_values(v, name + ".append", "v");
            t.append(kb, vb, ek, ev);
          },
          py::arg("k"), py::arg("v"), py::arg("ek"), py::arg("ev"))
      .def(
          "query",
          [name](Tile& t, const std::vector<long long>& q, int qmul, int qexp) {
            if (qmul < 0 || qmul > 0xFFFF) fail(name + ".query", "qmul", std::to_string(qmul), "expected 0..65535");
            const auto qb = int8_values(q, name + ".query", "q");
            py::gil_scoped_release release;
            return t.query(qb, static_cast<uint16_t>(qmul), qexp);
          },
          py::arg("q"), py::arg("qmul"), py::arg("qexp"))
      .def_property_readonly("tokens", &Tile::tokens)
      .def_property_readonly("events", [](const Tile& t) { return fields_dict(t.events()); })
      .def("reset_events", &Tile::reset_events);
}

}  // namespace

void bind_cim(py::module_& m) {
  py::enum_<MacroKind> macro_kind(m, "MacroKind");
  for (size_t i = 0; i < std::size(kMacroKindNames); ++i)  // every kind of macro_kinds.hpp
    macro_kind.value(std::string(kMacroKindNames[i]).c_str(), static_cast<MacroKind>(i));
  py::enum_<WeightEncoding>(m, "WeightEncoding")
      .value("twos_complement", WeightEncoding::twos_complement)
      .value("offset", WeightEncoding::offset)
      .value("differential", WeightEncoding::differential);
  py::enum_<AdcRange>(m, "AdcRange")
      .value("full_scale", AdcRange::full_scale)
      .value("calibrated", AdcRange::calibrated);
  py::enum_<NoiseModel>(m, "NoiseModel")
      .value("exact", NoiseModel::exact)
      .value("fixed", NoiseModel::fixed);
  py::enum_<TileKind>(m, "TileKind")
      .value("digital", TileKind::digital)
      .value("analog", TileKind::analog);
  py::enum_<TileSoftmax>(m, "TileSoftmax")
      .value("fixed", TileSoftmax::fixed)
      .value("hardsigmoid", TileSoftmax::hardsigmoid)
      .value("relu", TileSoftmax::relu);

  py::class_<MacroSpec> macro_spec(m, "MacroSpec", "Geometry and circuit options of one CIM macro.");
  bind_fields_readwrite(macro_spec);
  macro_spec.def(py::init<>())
      .def("validate", &MacroSpec::validate, py::arg("where") = "MacroSpec")
      .def("slices_per_weight", &MacroSpec::slices_per_weight)
      .def("weights_per_row", &MacroSpec::weights_per_row)
      .def("input_cycles", &MacroSpec::input_cycles)
      .def("row_groups", &MacroSpec::row_groups, py::arg("used_rows"))
      .def("weight_min", &MacroSpec::weight_min)
      .def("weight_max", &MacroSpec::weight_max)
      .def("input_min", &MacroSpec::input_min)
      .def("input_max", &MacroSpec::input_max);

  m.def("compute_events",
        [](const MacroSpec& s, int n_rows, int n_out) {
          return fields_dict(compute_events(s, n_rows, n_out));
        },
        py::arg("spec"), py::arg("n_rows"), py::arg("n_out"),
        "Events of one Macro.compute() on n_rows x n_out, derived analytically.");
  m.def("write_events",
        [](const MacroSpec& s, int n_rows, int n_out) {
          return fields_dict(write_events(s, n_rows, n_out));
        },
        py::arg("spec"), py::arg("n_rows"), py::arg("n_out"));

  py::class_<Macro>(m, "Macro", "Bit-accurate C model of one CIM macro (kvcim::cmodel::cim::Macro).")
      .def(py::init<const MacroSpec&>(), py::arg("spec"))
      .def_property_readonly("spec", &Macro::spec)
      .def("write", &Macro::write, py::arg("row"), py::arg("out"), py::arg("w"))
      .def(
          "write_block",
          [](Macro& mc, const std::vector<std::vector<long long>>& w) {
            const int n_rows = static_cast<int>(w.size());
            const int n_out = n_rows ? static_cast<int>(w[0].size()) : 0;
            std::vector<long long> flat;
            for (int r = 0; r < n_rows; ++r) {
              if (static_cast<int>(w[r].size()) != n_out)
                fail("Macro.write_block", "w[" + std::to_string(r) + "]",
                     std::to_string(w[r].size()) + " values",
                     "expected " + std::to_string(n_out) + " like row 0");
              flat.insert(flat.end(), w[r].begin(), w[r].end());
            }
            const auto bytes = int8_values(flat, "Macro.write_block", "w");
            mc.write_block(bytes.data(), n_rows, n_out);
          },
          py::arg("w"), "Writes W[r][o] (a list of rows, or a 2-D integer array) at the origin.")
      .def(
          "compute",
          [](Macro& mc, const std::vector<long long>& x, int n_out) {
            const auto xs = int32_values(x, "Macro.compute", "x");
            std::vector<int64_t> y(std::max(n_out, 0));
            {
              py::gil_scoped_release release;
              mc.compute(xs.data(), static_cast<int>(xs.size()), y.data(), n_out);
            }
            return y;
          },
          py::arg("x"), py::arg("n_out"),
          "y[o] = sum_r x[r] W[r][o] for o < n_out, as the circuit computes it.")
      .def("read", &Macro::read, py::arg("row"), py::arg("out"))
      .def_property_readonly("events", [](const Macro& mc) { return fields_dict(mc.events()); })
      .def("reset_events", &Macro::reset_events);

  py::class_<TileParams> tile_params(m, "TileParams", "Parameters of the CIM attention tile.");
  bind_fields_readwrite(tile_params);
  tile_params.def(py::init<>())
      .def("validate", &TileParams::validate, py::arg("where") = "TileParams")
      .def("__eq__", [](const TileParams& a, const TileParams& b) { return a == b; });

  py::class_<QueryScale>(m, "QueryScale")
      .def(py::init<>())
      .def_readwrite("qmul", &QueryScale::qmul)
      .def_readwrite("qexp", &QueryScale::qexp);
  m.def("query_scale", &query_scale, py::arg("q_scale"), py::arg("head_dim"),
        "qmul * 2^qexp = q_scale * log2(e) / sqrt(head_dim).");
  m.def("exp_lut", &exp_lut, py::arg("exp_frac"));
  m.def("append_cycles", &append_cycles, py::arg("params"));
  m.def("query_cycles", &query_cycles, py::arg("params"), py::arg("n_tokens"));

  py::class_<TileResult>(m, "TileResult")
      .def(py::init<>())
      .def_readwrite("o", &TileResult::o)
      .def_readwrite("evmax", &TileResult::evmax)
      .def_readwrite("ymax", &TileResult::ymax)
      .def_readwrite("sum", &TileResult::sum)
      .def("to_dict", &tile_result_dict)
      .def("__eq__", [](const TileResult& a, const TileResult& b) { return a == b; })
      .def("__repr__", [](const TileResult& r) {
        return "TileResult(" + std::string(py::str(tile_result_dict(r))) + ")";
      });
  m.def("dequantize", &dequantize, py::arg("result"), py::arg("params"),
        "Real output of one tile: o_i * 2^evmax / (2^P - 1).");
  m.def(
      "combine_tiles",
      [](const std::vector<TileResult>& parts, const TileParams& p) {
        return combine_tiles(std::span<const TileResult>(parts.data(), parts.size()), p);
      },
      py::arg("parts"), py::arg("params"));

  py::class_<CModelTile> cmodel_tile(m, "CModelTile",
                                     "Bit-accurate C model of the CIM attention tile (AttentionTile).");
  cmodel_tile.def(py::init<const TileParams&>(), py::arg("params") = TileParams{});
  bind_tile(cmodel_tile, "CModelTile");
  py::class_<AnalogTile> analog_tile(
      m, "AnalogTile",
      "The analog (gain-cell) attention tile: multi-level cells, an ADC per score and output, noise, "
      "stuck-at faults, retention and refresh (docs/attention_tile.md, 'The analog tile').");
  analog_tile.def(py::init<const TileParams&>(), py::arg("params"))
      .def("set_time_ns", &AnalogTile::set_time_ns, py::arg("ns"),
           "The time now (ns since the sequence began): appends are written at it, queries read at it.")
      .def_property_readonly("refreshes", &AnalogTile::refreshes)
      .def_property_readonly("stuck_cells", &AnalogTile::stuck_cells);
  bind_tile(analog_tile, "AnalogTile");

  m.def(
      "cosim",
      [](int trials, uint64_t seed, std::optional<int> tokens, double backpressure, bool corners, int port_episodes,
         std::optional<std::string> config) -> py::dict {
#ifdef KVCIM_HAVE_RTL
        // tokens None: random (the command's --tokens 0, which Python does not accept)
        if (tokens && *tokens < 1)
          fail("cosim", "tokens", std::to_string(*tokens), "expected None (random) or at least 1");
        const rtl::CosimOptions o{.trials = trials, .seed = seed, .tokens = tokens.value_or(0),
                                  .backpressure = backpressure, .corners = corners,
                                  .port_episodes = port_episodes, .trace_path = {}};
        // every built configuration, as `kvcim cosim` (the linked one, then the table's modules)
        const rtl::RtlTiles tiles(rtl::RtlTileSource{rtl::RtlTile::built_params(),
                                                     [] { return std::make_unique<rtl::RtlTile>(); }});
        std::vector<rtl::RtlConfig> configs = tiles.configs(&rtl::cosim_job);
        if (config) {
          std::erase_if(configs, [&](const rtl::RtlConfig& c) { return c.name != *config; });
          if (configs.empty()) fail("cosim", "config", *config, "a built configuration (kvcim cosim --help)");
        }
        for (const rtl::RtlConfig& c : configs) rtl::check_cosim_options(o, c.params);
        py::list per_config;
        int64_t results = 0, events = 0;
        uint64_t cycles = 0;
        std::string first, failure;
        TileEvents cmodel_events, rtl_events;
        for (const rtl::RtlConfig& c : configs) {
          rtl::CosimResult r;
          {
            py::gil_scoped_release release;
            r = c.cosim(o);
          }
          if (first.empty() && !r.first.empty()) {
            const rtl::CosimMismatch& m = r.first.front();
            first = c.name + " " + m.what + ": " + m.results + (m.results.empty() || m.events.empty() ? "" : "; ") +
                    m.events;
          }
          if (failure.empty() && !r.failure.empty()) failure = c.name + ": " + r.failure;
          results += r.result_mismatches;
          events += r.event_mismatches;
          cycles += r.sim_cycles;
          cmodel_events += r.cmodel_events;
          rtl_events += r.rtl_events;
          py::dict one;
          one["config"] = c.name;
          one["result_mismatches"] = r.result_mismatches;
          one["event_mismatches"] = r.event_mismatches;
          one["failure"] = r.failure;
          one["corners"] = r.corners;
          one["port_appends"] = r.port_appends;
          one["port_queries"] = r.port_queries;
          one["sim_cycles"] = r.sim_cycles;
          per_config.append(one);
        }
        py::dict d;
        d["trials"] = trials;
        d["seed"] = seed;
        d["tokens"] = tokens ? py::cast(*tokens) : py::none();
        d["backpressure"] = backpressure;
        d["result_mismatches"] = results;
        d["event_mismatches"] = events;
        d["first_mismatch"] = first;
        d["failure"] = failure;
        d["configs"] = per_config;
        d["cmodel_events"] = fields_dict(cmodel_events);
        d["rtl_events"] = fields_dict(rtl_events);
        d["sim_cycles"] = cycles;
        return d;
#else
        (void)trials, (void)seed, (void)tokens, (void)backpressure, (void)corners, (void)port_episodes, (void)config;
        throw Error("cosim: rtl = absent: this build has no Verilated tile (configure with "
                    "-DKVCIM_WITH_RTL=ON and Verilator installed)");
#endif
      },
      // the defaults of `kvcim cosim` (rtl::CosimDefaults); tokens None: random, as --tokens 0;
      // config None: every built configuration
      py::arg("trials") = rtl::CosimDefaults::trials, py::arg("seed") = rtl::CosimDefaults::seed,
      py::arg("tokens") = py::none(), py::arg("backpressure") = rtl::CosimDefaults::backpressure,
      py::arg("corners") = rtl::CosimDefaults::corners, py::arg("port_episodes") = rtl::CosimDefaults::port_episodes,
      py::arg("config") = py::none(),
      "Every built configuration of the RTL tile against the C model, bit for bit (results and event "
      "counters), over random problems, the directed corners and port-independent stimulus, under "
      "back-pressure (as `kvcim cosim`). Returns a dict of counts, the first mismatch, any failure "
      "(a fired assertion or a hang) and one dict per configuration.");
}

}  // namespace kvcim::python
