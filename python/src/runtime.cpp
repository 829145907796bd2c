// The runtime from Python: one whole generation on CIM beside the float reference, through the
// same runtime::run_job as `kvcim run` (spec, node, sizing, policy -> placement -> session hardware ->
// run_generation -> run_report), returning the report as JSON text that the Python Report class wraps. The GIL is
// released for the run; Ctrl-C in Python stops it at the next forward pass.
#include <cstdio>
#include <optional>
#include <vector>

#include "bindings.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/runtime/defaults.hpp"
#include "kvcim/runtime/html_report.hpp"
#include "kvcim/runtime/report.hpp"
#include "kvcim/runtime/run_job.hpp"
#ifdef KVCIM_HAVE_RTL
#include "kvcim/rtl/rtl_tile.hpp"
#endif

namespace kvcim::python {

using namespace kvcim::cmodel;
using namespace kvcim::runtime;

void bind_runtime(py::module_& m) {
  m.def(
      "_run",
      [](const py::object& model, const mapper::HardwareSpec& hw, const py::object& policy,
         const std::optional<std::string>& tokenizer_path, const std::vector<std::string>& prompts,
         int batch, int steps,
         const std::string& linear, const std::string& attention, uint64_t seed, float temperature,
         float top_p, const std::optional<std::string>& eval_text,
         const std::optional<std::string>& eval_text_path, int eval_tokens, int threads,
         const py::object& progress, std::optional<double> node, bool fit, std::optional<double> area_mm2,
         const std::string& baseline, const std::string& idle) {
        SessionOptions so;
        so.prompts = prompts;
        so.sequences = batch;
        so.steps = steps;
        so.seed = seed;
        so.temperature = temperature;
        so.top_p = top_p;
        if (threads < 1 || threads > 2) fail("run", "threads", std::to_string(threads), "expected 1 or 2");
        so.threads = threads;
        so.backends = parse_backends("backends.linear", linear, "backends.attention", attention);
        if (eval_text && eval_text_path && !eval_text_path->empty())
          fail("run", "eval_text", "given with eval_text_path", "expected one of the two");
        if (eval_tokens < 1) fail("run", "eval_tokens", std::to_string(eval_tokens), "expected at least 1");
        so.eval_tokens = eval_tokens;
        // As `kvcim run`: the evaluation text is a file (the shipped one by default; '' or None
        // skips the evaluation), or the text itself (eval_text; '' skips it).
        std::string eval_path = eval_text ? "" : eval_text_path.value_or("");
        if (eval_text) so.eval_text = *eval_text;
        else if (!eval_path.empty()) so.eval_text = read_eval_text(eval_path);

        // The checkpoint: the Model's own weights (copied), or read from a path.
        Checkpoint ck;
        if (py::isinstance<PyModel>(model)) {
          const auto& pm = model.cast<const PyModel&>();
          ck = Checkpoint{pm.model->config(), pm.model->weights(), pm.model->path()};
        } else {
          const std::string path =
              model.is_none() ? default_model_path()
                              : std::string(py::str(py::module_::import("os").attr("fspath")(model)));
          py::gil_scoped_release release;
          ck = load_checkpoint(path, Residency::read_only);  // as `kvcim run`: streamed evaluation
        }
        const std::string tok_path = tokenizer_path.value_or(tokenizer_path_for(ck.path));

        // Each forward pass: the Python progress callback (if any), and a chance for Ctrl-C.
        so.progress = [&progress](int done, int total) {
          py::gil_scoped_acquire acquire;
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
          if (!progress.is_none()) progress(done, total);
        };
        so.eval_progress = [](int, int) {  // Ctrl-C during the evaluation, after each sequence
          py::gil_scoped_acquire acquire;
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        };

        // the chip as `kvcim run` composes it: text (or nothing) may leave the overflow
        // unnamed; a Policy always names it
        mapper::HardwareSpec chip_hw = hw;
        chip_hw.idle_leaks = mapper::idle_leaks_from("run", idle);
        RunChip chip{.hw = chip_hw, .policy_text = "", .policy = std::nullopt, .node_nm = node, .fit = fit,
                     .area_mm2 = area_mm2, .baseline = baseline};
        if (py::isinstance<py::str>(policy)) chip.policy_text = policy.cast<std::string>();
        else if (!policy.is_none()) chip.policy = policy.cast<mapper::Policy>();

        nlohmann::json report;
        std::string note;
        {
          py::gil_scoped_release release;
          const Tokenizer tok = Tokenizer::load(tok_path, ck.config.vocab_size);
          std::optional<rtl::RtlTileSource> linked;
#ifdef KVCIM_HAVE_RTL
          linked = rtl::RtlTileSource{rtl::RtlTile::built_params(),
                                 [] { return std::make_unique<rtl::RtlTile>(); }};
#endif
          // a tile the table lacks is built on first use into the cache, as by `kvcim run`
          rtl::RtlBuildOptions build;
          build.enabled = true;
          build.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
          RunResult job = run_job(ck, tok, std::move(chip), so, {ck.path, tok_path, hw.source, eval_path},
                                  rtl::RtlTiles(linked, rtl::RtlTiles::rtl_module_dirs(), build),
                                  "backends.attention");
          report = to_json(job.report);
          note = std::move(job.note);
        }
        if (!note.empty() && PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 1) != 0)
          throw py::error_already_set();
        return report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      },
      py::arg("model"), py::arg("hw"), py::arg("policy"), py::arg("tokenizer"), py::arg("prompts"),
      py::arg("batch"), py::arg("steps"), py::arg("linear"), py::arg("attention"), py::arg("seed"),
      py::arg("temperature"), py::arg("top_p"), py::arg("eval_text"), py::arg("eval_text_path"),
      py::arg("eval_tokens"), py::arg("threads"), py::arg("progress"), py::arg("node"), py::arg("fit"),
      py::arg("area_mm2"), py::arg("baseline") = "synthetic", py::arg("idle") = "gated",
      "The report of `kvcim run` as JSON text; use kvcim.run(), which wraps it in a Report.");
  m.def(
      "html_report",
      [](const std::string& report_json) {
        nlohmann::json report;
        try {
          report = nlohmann::json::parse(report_json);
        } catch (const nlohmann::json::exception& e) {
          fail("html_report", "report_json", "invalid", e.what());
        }
        py::gil_scoped_release release;
        return html_report(report);
      },
      py::arg("report_json"),
      "The run report (JSON text of `kvcim run --json`) as one self-contained HTML page "
      "(what `kvcim run --html` writes).");
  m.def(
      "defaults",
      [] {
        py::dict run, cosim;
        run["prompt"] = RunDefaults::prompt;
        run["steps"] = RunDefaults::steps;
        run["seed"] = RunDefaults::seed;
        run["temperature"] = RunDefaults::temperature;
        run["top_p"] = RunDefaults::top_p;
        run["threads"] = RunDefaults::threads;
        run["eval_tokens"] = RunDefaults::eval_tokens;
        // no data paths here: `import kvcim` reads these, and must not fail on a bad data root
        // (the evaluation text's default is kvcim.default_eval_text_path(), read when run() runs)
        run["backend"] = RunDefaults::backend;
        cosim["trials"] = rtl::CosimDefaults::trials;
        cosim["seed"] = rtl::CosimDefaults::seed;
        cosim["tokens"] = rtl::CosimDefaults::tokens;
        cosim["backpressure"] = rtl::CosimDefaults::backpressure;
        cosim["corners"] = rtl::CosimDefaults::corners;
        cosim["port_episodes"] = rtl::CosimDefaults::port_episodes;
        py::dict d;
        d["run"] = run;
        d["cosim"] = cosim;
        return d;
      },
      "The defaults of `kvcim run` and `kvcim cosim`, which kvcim.run() and kvcim.cosim() share "
      "(runtime/defaults.hpp).");
  m.def("default_eval_text_path", &default_eval_text_path,
        "The shipped human-written evaluation text (testdata/eval/austen_paragraphs.txt).");
}

}  // namespace kvcim::python
