// The mapper from Python: HardwareSpec (from a YAML file or a dict), Policy, ModelShape, and
// map(model_or_shape, spec, policy) -> Placement with its analytic figures, per-token ledgers and
// a per-macro utilisation map. Field names are the C++ ones; HardwareSpec.to_dict() gives the
// YAML schema back (technology paths made absolute) so that from_dict(to_dict()) round-trips.
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "bindings.hpp"
#include "spec_fields.hpp"
#include "kvcim/spec_fields_json.hpp"
#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/cmodel/energy/sram_nodes.hpp"
#include "kvcim/cmodel/macro_model/macro_components.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/macro_map.hpp"
#include "kvcim/mapper/placement.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/mapper/report.hpp"
#include "kvcim/mapper/shape.hpp"
#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/map_job.hpp"
#include "kvcim/mapper/sizing.hpp"
#include "kvcim/cmodel/checkpoint.hpp"

namespace kvcim::python {

using namespace kvcim::mapper;
namespace energy = kvcim::cmodel::energy;
namespace cim = kvcim::cmodel::cim;

namespace {

// The YAML schema of configs/hw/*.yaml, every field explicit (the C++ inverse of the parser).
py::dict hardware_dict(const HardwareSpec& hw) {
  return to_python(hardware_spec_to_json(hw)).cast<py::dict>();
}

// A section of the hardware spec as a typed value, its dict the mapper's to_json of it.
template <typename S>
py::class_<S> bind_section(py::module_& m, const char* name, const char* doc) {
  return bind_spec_section<S>(m, name, doc, static_cast<nlohmann::json (*)(const S&)>(&mapper::to_json));
}

void bind_spec_sections(py::module_& m) {
  auto org = bind_section<Organization>(m, "Organization", "Where the macros sit (HardwareSpec.organization).");
  org.def_property_readonly("tiles", &Organization::tiles).def_property_readonly("banks", &Organization::banks);
  bind_section<KvSpec>(m, "KvSpec", "The attention tiles (HardwareSpec.kv).");
  bind_section<Precision>(m, "Precision", "Bit widths (HardwareSpec.precision).");
  bind_section<energy::BaselineConfig>(m, "BaselineConfig",
                                            "The conventional engine compared against (HardwareSpec.baseline).");
  bind_section<energy::NodePoint>(m, "NodePoint", "A technology node and its supply (HardwareSpec.comparison).");
  bind_section<DieSpec>(m, "DieSpec", "The largest die the chip is cut into (HardwareSpec.die).");
  bind_section<LinkSpec>(m, "LinkSpec", "One die-to-die link (HardwareSpec.link).");
  bind_section<BufferSpec>(m, "BufferSpec", "The on-chip buffer (HardwareSpec.buffer).");
  bind_section<OffchipSpec>(m, "OffchipSpec", "The off-chip memory (HardwareSpec.offchip).");
  bind_section<DigitalSpec>(m, "DigitalSpec", "The digital periphery (HardwareSpec.digital).");
}

// Every section's field table as data (key, type, unit, min, max, default, kinds, doc, ...):
// docs/hardware_fields.md is made from it (kvcim._fieldsdoc), the tests walk it.
nlohmann::json spec_field_tables() {
  return {{"spec", describe_fields<HardwareSpec>()},
          {"macro", describe_fields<cim::MacroSpec>()},
          {"organization", describe_fields<Organization>()},
          {"kv", describe_fields<KvSpec>()},
          {"precision", describe_fields<Precision>()},
          {"baseline", describe_fields<energy::BaselineConfig>()},
          {"comparison", describe_fields<energy::NodePoint>()},
          {"buffer", describe_fields<BufferSpec>()},
          {"offchip", describe_fields<OffchipSpec>()},
          {"digital", describe_fields<DigitalSpec>()},
          {"tile", describe_fields<cim::TileParams>()},
          {"die", describe_fields<DieSpec>()},
          {"link", describe_fields<LinkSpec>()},
          {"machine", describe_fields<Machine>()},
          {"macro_file.macro", describe_fields<cmodel::macro_model::MacroDesc>()},
          {"macro_file.published", describe_fields<cmodel::macro_model::Published>()},
          {"sram_nodes.node", describe_fields<energy::SramNodeEntry>()},
          {"macro_model", describe_fields<cmodel::macro_model::Constants>()},
          {"macro_model.constants", describe_fields<cmodel::macro_model::MacroConstants>()}};
}

HardwareSpec hardware_from_dict(const py::dict& d, const std::string& base_dir) {
  const nlohmann::json j = to_json(d, "HardwareSpec.from_dict");
  py::gil_scoped_release release;
  return hardware_spec_from_json(j, base_dir, "<dict>");
}

// A dict of policy fields goes through the mapper's one key table (names or short aliases).
Policy policy_from_dict(const py::dict& d) { return policy_from_json(to_json(d, "policy"), Policy{}); }

// One field set as the key table sets it, then the whole policy checked.
void set_policy_attribute(Policy& p, const char* key, const py::handle& value) {
  Policy q = p;
  set_policy_field(q, key, to_json(value, "policy"));
  q.validate("policy");
  p = q;
}

Policy as_policy(const py::handle& h) {
  if (h.is_none()) return Policy{};
  if (py::isinstance<Policy>(h)) return h.cast<Policy>();
  if (py::isinstance<py::str>(h)) return parse_policy(h.cast<std::string>());
  if (py::isinstance<py::dict>(h)) return policy_from_dict(h.cast<py::dict>());
  fail("map", "policy", py::str(py::repr(h)), "expected a Policy, a dict or text such as 'overflow=spill,page=16'");
}

HardwareSpec as_hardware(const py::handle& h) {
  if (py::isinstance<HardwareSpec>(h)) return h.cast<HardwareSpec>();
  if (py::isinstance<py::dict>(h)) return hardware_from_dict(h.cast<py::dict>(), "");
  if (py::isinstance<py::str>(h) || py::hasattr(h, "__fspath__")) {
    const std::string path = py::str(py::module_::import("os").attr("fspath")(h));
    py::gil_scoped_release release;
    return load_hardware_spec(path);
  }
  if (h.is_none()) {
    py::gil_scoped_release release;
    return load_hardware_spec(default_hardware_spec_path());
  }
  fail("map", "spec", py::str(py::repr(h)), "expected a HardwareSpec, a YAML path or a dict");
}

ModelShape as_shape(const py::handle& h) {
  if (py::isinstance<ModelShape>(h)) return h.cast<ModelShape>();
  if (py::isinstance<PyModel>(h)) {
    const auto& m = h.cast<const PyModel&>();
    return ModelShape{m.model->path(), m.model->config(), m.model->config().sliding_window};
  }
  if (py::isinstance<cmodel::Config>(h)) {
    ModelShape s{"custom", h.cast<cmodel::Config>()};
    s.config.validate("map: shape");
    return s;
  }
  if (py::isinstance<py::str>(h)) {
    const std::string text = h.cast<std::string>();
    if (text.find('=') != std::string::npos) return parse_shape(text);
    if (std::filesystem::is_regular_file(text)) return shape_from_checkpoint(text);
    return shape_preset(text);
  }
  fail("map", "model_or_shape", py::str(py::repr(h)),
       "expected a Model, a Config, a ModelShape, a preset name, 'dim=...,...' or a checkpoint path");
}

py::dict ledger_dict(const energy::Ledger& l, const HardwareSpec& hw) {
  const energy::Costs costs = hw.costs(), kv_costs = hw.kv_costs();
  return to_python(l.to_json(costs, &kv_costs)).cast<py::dict>();
}

// cim + periphery = what the CIM chip spends; conventional = the baseline engine doing the same
// token (or the same tokens) on the baseline technology.
py::dict token_ledgers_dict(const TokenLedgers& t, const energy::Ledger& conventional,
                            const HardwareSpec& hw) {
  py::dict d;
  d["cim"] = ledger_dict(t.cim, hw);
  d["periphery"] = ledger_dict(t.periphery, hw);
  d["total"] = ledger_dict(t.total(), hw);
  d["conventional"] = to_python(conventional.to_json(hw.baseline_costs()));
  return d;
}

// What `kvcim map --json` writes (mapper::to_json), plus macro_map: every macro of the chip with
// its role (weights, kv, unused) and utilisation, for the utilisation plot.
py::dict placement_dict(const Placement& p) {
  nlohmann::json j;
  {
    py::gil_scoped_release release;
    j = mapper::to_json(p, analyse(p));
  }
  py::dict d = to_python(j).cast<py::dict>();
  const MacroMap mm = macro_map(p);
  const double cells = static_cast<double>(p.hw.macro_cells());
  py::list macros;
  for (size_t i = 0; i < mm.used_cells.size(); ++i) {
    py::dict md;
    md["macro"] = i;
    md["role"] = macro_role_name(mm.role[i]);
    md["utilization"] = cells > 0 ? std::min(1.0, mm.used_cells[i] / cells) : 0.0;
    macros.append(md);
  }
  d["macro_map"] = macros;
  d["macro_map_truncated"] = mm.truncated;
  return d;
}

}  // namespace

void bind_mapper(py::module_& m) {
  m.def("default_hardware_spec_path", &default_hardware_spec_path,
        "configs/hw/sram_digital.yaml of the source tree.");

  bind_spec_sections(m);
  m.def("spec_field_tables", [] { return to_python(spec_field_tables()); },
        "Every spec section's field table (key, type, unit, min, max, default, kinds, doc); "
        "`spec` is the top level, `tile` is TileParams, which the kv section fills in; `machine` a named machine's file "
        "(configs/machines).");
  py::class_<HardwareSpec> hardware(m, "HardwareSpec", "A validated hardware spec (kvcim::mapper::HardwareSpec).");
  bind_fields_readonly(hardware);  // name, description, technology
  hardware
      .def_static(
          "from_yaml",
          [](const py::object& path) {
            const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
            py::gil_scoped_release release;
            return load_hardware_spec(p);
          },
          py::arg("path"), "Reads and validates a spec file (configs/hw/*.yaml).")
      .def_static("from_dict", &hardware_from_dict, py::arg("d"), py::arg("base_dir") = "",
                  "The same from a dict; relative technology paths are resolved against "
                  "base_dir (default: the shipped configs/hw).")
      .def_static(
          "default", [] { return load_hardware_spec(default_hardware_spec_path()); },
          "The shipped configs/hw/sram_digital.yaml.")
      .def_readonly("source", &HardwareSpec::source)
      .def_readonly("macro", &HardwareSpec::macro)
      // Sections as typed copies (the spec is immutable from Python; to_dict/from_dict changes it)
      .def_readonly("organization", &HardwareSpec::organization)
      .def_readonly("kv", &HardwareSpec::kv)
      .def_readonly("precision", &HardwareSpec::precision)
      .def_readonly("buffer", &HardwareSpec::buffer)
      .def_readonly("offchip", &HardwareSpec::offchip)
      .def_readonly("digital", &HardwareSpec::digital)
      .def_readonly("baseline", &HardwareSpec::baseline)
      .def_readonly("comparison", &HardwareSpec::comparison, "The node (and supply) both sides are priced at.")
      .def_readonly("die", &HardwareSpec::die, "The largest die (reticle, or wafer-scale) the chip is cut into.")
      .def_readonly("link", &HardwareSpec::link, "One die-to-die link: energy per bit, bandwidth, latency.")
      .def("compare_at", &HardwareSpec::compare_at, py::arg("node_nm"), py::arg("where") = "node_nm",
           "Prices both sides at another node from now on (as kvcim run/map --node).")
      .def("conditions", [](const HardwareSpec& h) { return to_python(to_json(energy_conditions(h))); },
           "What the energy figures assume: the node, every table's node, supply and factor, the "
           "baseline's SRAM banks, the terms included, both chips' areas. The hardware alone: no "
           "placement, so no attention tile logic (a map's or a run's report has it).")
      .def("tile", &HardwareSpec::tile, py::arg("head_dim"))
      .def("macro_cells", &HardwareSpec::macro_cells)
      .def("validate", &HardwareSpec::validate)
      .def("to_dict", &hardware_dict,
           "The YAML schema, every field explicit, technology paths absolute.")
      .def("__repr__", [](const HardwareSpec& h) {
        return "HardwareSpec(name='" + h.name + "', source='" + h.source + "')";
      })
      .def(py::pickle([](const HardwareSpec& h) { return hardware_dict(h); },
                      [](const py::dict& d) { return hardware_from_dict(d, ""); }));

  py::class_<Policy>(m, "Policy", "A mapping policy (kvcim::mapper::Policy).")
      .def(py::init<>())
      .def_static("parse", [](const std::string& text) { return parse_policy(text); },
                  py::arg("text"), "From text such as 'overflow=spill,page=16,kv_fraction=0.5'.")
      .def_static("from_dict", &policy_from_dict, py::arg("d"))
      .def_readwrite("kv_fraction", &Policy::kv_fraction)
      .def_readwrite("tokens_per_page", &Policy::tokens_per_page)
      .def_readwrite("gqa_sharing", &Policy::gqa_sharing)
      .def_readwrite("replicas", &Policy::replicas)
      .def_readwrite("sequences", &Policy::sequences)
      .def_property(
          "overflow", [](const Policy& p) { return std::string(name(p.overflow)); },
          [](Policy& p, const py::object& o) { set_policy_attribute(p, "overflow", o); })
      .def_readwrite("window_tokens", &Policy::window_tokens)
      .def_readwrite("sink_tokens", &Policy::sink_tokens)
      .def_property(
          "evict", [](const Policy& p) { return std::string(name(p.evict)); },
          [](Policy& p, const py::object& e) { set_policy_attribute(p, "evict", e); })
      .def_property(
          "evict_granularity", [](const Policy& p) { return std::string(name(p.evict_granularity)); },
          [](Policy& p, const py::object& g) { set_policy_attribute(p, "evict_granularity", g); })
      .def_readwrite("recent_tokens", &Policy::recent_tokens)
      .def("validate", &Policy::validate, py::arg("where") = "policy")
      .def("to_dict", [](const Policy& p) { return to_python(policy_to_json(p)); })
      .def("__str__", [](const Policy& p) { return to_string(p); })
      .def("__repr__", [](const Policy& p) { return "Policy('" + to_string(p) + "')"; });

  py::class_<ModelShape>(m, "ModelShape", "A model's dimensions without weights.")
      .def_readonly("name", &ModelShape::name)
      .def_readonly("config", &ModelShape::config)
      .def("__str__", [](const ModelShape& s) { return to_string(s.config); })
      .def("__repr__", [](const ModelShape& s) {
        return "ModelShape('" + s.name + "', '" + to_string(s.config) + "')";
      });
  m.def("parse_shape", &parse_shape, py::arg("text"));
  m.def("shape_preset", &shape_preset, py::arg("name"));
  m.def("preset_names", &preset_names);
  m.def("shape_from_checkpoint", &shape_from_checkpoint, py::arg("path"));

  py::class_<Placement, std::shared_ptr<Placement>>(
      m, "Placement", "Where every weight block and KV page lives (kvcim::mapper::Placement).")
      .def_property_readonly("shape", [](const Placement& p) { return p.shape; })
      .def_property_readonly("hardware", [](const Placement& p) { return p.hw; })
      .def_property_readonly("policy", [](const Placement& p) { return p.policy; })
      .def_property_readonly("context", [](const Placement& p) { return p.context; })
      .def_property_readonly(
          "figures",
          [](const Placement& p) {
            nlohmann::json j;
            {
              py::gil_scoped_release release;
              j = figures_json(p, analyse(p));
            }
            return to_python(j).cast<py::dict>();
          },
          "The derived figures, keyed as `kvcim map --json` and to_dict() key them (a subset of "
          "to_dict(): energy_per_token_pj.cim, weights.blocks_offchip, kv.tokens.offchip, ...).")
      .def("conditions", [](const Placement& p) { return to_python(to_json(energy_conditions(p.hw, p.kv.tiles))); },
           "As HardwareSpec.conditions, with the logic of the placement's KV attention tiles in the "
           "CIM chip's area (and so in the iso-area conventional chip's SRAM), as `kvcim map` reports.")
      .def("token_ledgers",
           [](const Placement& p) {
             MapReport r;
             {
               py::gil_scoped_release release;
               r = analyse(p);
             }
             return token_ledgers_dict(r.ledgers, r.conventional, p.hw);
           },
           "Events and energy (ledger JSON) of one generated token at the placement's context: "
           "cim, periphery, total (the CIM chip) and conventional (the baseline engine).")
      .def("generation_ledgers",
           [](const Placement& p, int64_t steps) {
             if (steps < 1) fail("Placement.generation_ledgers", "steps", std::to_string(steps), "expected at least 1");
             TokenLedgers t;
             energy::Ledger base;
             {
               py::gil_scoped_release release;
               t = generation_ledgers(p, steps);
               for (int64_t pos = 0; pos < steps; ++pos)
                 base += conventional_ledger(p.shape, p.hw, pos);
             }
             return token_ledgers_dict(t, base, p.hw);
           },
           py::arg("steps"), "The same summed over a generation of `steps` tokens.")
      .def("to_dict", &placement_dict,
           "What `kvcim map --json` writes (schema_version 1), plus macro_map: every macro's "
           "role and utilization.")
      .def("summary", [](const Placement& p) { return mapper::summary(p, analyse(p)); },
           "The readable summary `kvcim map` prints.")
      .def("__repr__", [](const Placement& p) {
        return "Placement(shape='" + p.shape.name + "', hardware='" + p.hw.name +
               "', policy='" + to_string(p.policy) + "', context=" + std::to_string(p.context) + ")";
      });

  m.def("machine_names", &machine_names, "The named conventional machines of configs/machines (--baseline).");
  m.def(
      "baseline_step",
      [](const std::string& machine, const py::object& placement_or_shape, std::optional<int64_t> sequences,
         std::optional<int64_t> context, std::optional<int> bits) {
        const Machine mc = machine_by_name(machine);
        MachineRegime r;
        cmodel::Config c;
        if (py::isinstance<Placement>(placement_or_shape)) {
          const Placement& p = placement_or_shape.cast<const Placement&>();
          r = machine_regime(p);
          c = p.shape.config;
        } else {
          c = as_shape(placement_or_shape).config;
        }
        if (sequences) r.sequences = *sequences;
        if (context) r.context = *context;
        if (bits) r.weight_bits = r.kv_bits = *bits;
        return to_python(machine_step_json(mc, r, machine_step(mc, c, r)));
      },
      py::arg("machine"), py::arg("placement_or_shape"), py::kw_only(), py::arg("sequences") = py::none(),
      py::arg("context") = py::none(), py::arg("bits") = py::none(),
      "One decode step of a named machine (what `kvcim map --baseline NAME` records as "
      "baseline_machine): for a Placement at its regime (sequences, context, the synthetic "
      "engine's bits), or for a model shape at sequences/context/bits (default 1, 1, 16).");
  m.def(
      "map",
      [](const py::object& model_or_shape, const py::object& spec, const py::object& policy,
         std::optional<int64_t> context, bool fit, std::optional<double> area_mm2, const std::string& baseline,
         const std::string& idle) {
        // the rules of `kvcim map` (mapper/map_job.hpp); the embedded model by default
        MapRequest req;
        req.shape = model_or_shape.is_none() ? shape_from_checkpoint(cmodel::default_model_path())
                                             : as_shape(model_or_shape);
        req.hw = as_hardware(spec);
        req.hw.idle_leaks = idle_leaks_from("map", idle);
        req.baseline = baseline;
        // text (or nothing) may leave the overflow unnamed; a Policy or a dict always names it
        if (!policy.is_none() && !py::isinstance<py::str>(policy)) req.policy = as_policy(policy);
        else if (!policy.is_none()) req.policy_text = policy.cast<std::string>();
        req.context = context;
        req.fit = fit;
        req.area_mm2 = area_mm2;
        std::shared_ptr<Placement> placed;
        std::string note;
        {
          py::gil_scoped_release release;
          MapResult job = map_job(std::move(req));
          note = std::move(job.note);
          placed = std::make_shared<Placement>(std::move(job.placement));
        }
        if (!note.empty() && PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 1) != 0)
          throw py::error_already_set();
        return placed;
      },
      py::arg("model_or_shape") = py::none(), py::arg("spec") = py::none(),
      py::arg("policy") = py::none(), py::arg("context") = py::none(), py::kw_only(),
      py::arg("fit") = false, py::arg("area_mm2") = py::none(), py::arg("baseline") = "synthetic",
      py::arg("idle") = "gated",
      "Places a model (Model, Config, ModelShape, preset name, 'dim=...' text or checkpoint "
      "path; default: the embedded model) on a hardware spec (HardwareSpec, YAML path, dict; default: the shipped "
      "sram_digital) under a policy (Policy, dict, text; default: weights first, fail on "
      "overflow), with every sequence grown to `context` tokens (default, as `kvcim map`: the "
      "model's seq_len, capped by what fits under overflow=fail on a chip not sized for the model). "
      "As `kvcim map`: fit=True sizes the chip for the model (macros: auto), area_mm2 caps it "
      "(and spills what does not fit unless the policy names an overflow), and a fixed spec too "
      "small for the weights, with no overflow named, is sized for the model with a UserWarning. "
      "As `kvcim map --baseline/--idle`: baseline names a machine (kvcim.machine_names()) whose "
      "decode step at the placement's regime figures['baseline_machine'] gives; idle is the idle "
      "silicon rule of both sides, 'gated' or 'leaking'.");
}

}  // namespace kvcim::python
