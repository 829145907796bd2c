// The job of `kvcim run` and of kvcim.run() once their inputs are read: the chip composed as asked
// (the comparison node, a sizing request, the automatic fit of a model the spec cannot hold), the
// placement for the run, the attention tiles (C model, or the Verilated RTL tile), the generation
// and its report. One function, so that the command and the Python call differ only in parsing
// and printing.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/runtime/report.hpp"
#include "kvcim/rtl/rtl_tiles.hpp"
#include "kvcim/runtime/session.hpp"

namespace kvcim::runtime {

// The batch size: options.sequences, policy.sequences and the number of prompts, those other
// than 1 agreeing (else kvcim::Error).
int batch_size(const SessionOptions& options, const mapper::Policy& policy);

// What a run asks of the chip besides the spec file: `kvcim run --policy/--node/--fit/--area-mm2`
// and kvcim.run(policy=, node=, fit=, area_mm2=).
struct RunChip {
  mapper::HardwareSpec hw;
  // The policy as text, where the overflow may be left unnamed (then a fixed spec too small for
  // the model's weights is sized for them, with a note), or as a Policy, which always names it.
  std::string policy_text;
  std::optional<mapper::Policy> policy;
  std::optional<double> node_nm;   // the node both sides are compared at; none: the spec's
  bool fit = false;                // organization.macros: auto
  std::optional<double> area_mm2;  // a budget for the CIM chip (mm2 at that node); implies fit
  // A named conventional machine reported beside the spec's synthetic engine (configs/machines;
  // `kvcim run --baseline`, kvcim.run(baseline=)); "synthetic": the engine alone.
  std::string baseline = "synthetic";
};

struct RunResult {
  RunReport report;
  std::string note;  // "" or what was done to the spec unasked (sized for the model's weights)
};

// The whole job: the chip composed as asked (node, sizing, the automatic fit), then as below.
// Errors name `run` and the field (node.node_nm, area_mm2) or the policy's field.
RunResult run_job(const cmodel::Checkpoint& checkpoint, const cmodel::Tokenizer& tokenizer, RunChip chip,
                  const SessionOptions& options, const RunInputs& inputs, const rtl::RtlTiles& rtl_tiles,
                  const std::string& attention_option);

// The spec and the policy used as they are (the chip already composed).
// `options.backends.attention == rtl` needs a tile of `rtl_tiles` built at the spec's tile parameters
// (the linked one, a module, or one `rtl_tiles` builds on demand; a build without the RTL has none,
// and errors then name `attention_option`); without one, the error lists the configurations there are.
RunReport run_job(const cmodel::Checkpoint& checkpoint, const cmodel::Tokenizer& tokenizer,
                  const mapper::HardwareSpec& hw, const mapper::Policy& policy,
                  const SessionOptions& options, const RunInputs& inputs, const rtl::RtlTiles& rtl_tiles,
                  const std::string& attention_option);

// The evaluation text (added to the evaluation's sampled sequences) of a file, as bytes.
std::string read_eval_text(const std::string& path);
// The shipped human-written evaluation text, testdata/eval/austen_paragraphs.txt (its README).
std::string default_eval_text_path();

}  // namespace kvcim::runtime
