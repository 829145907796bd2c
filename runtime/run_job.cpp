#include "kvcim/runtime/run_job.hpp"

#include <fstream>
#include <sstream>

#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"
#include "kvcim/runtime/hardware.hpp"

namespace kvcim::runtime {

nlohmann::json run_job(const cmodel::Checkpoint& ck, const cmodel::Tokenizer& tok,
                       const mapper::HardwareSpec& hw, const mapper::Policy& policy,
                       const SessionOptions& so, const RunInputs& inputs,
                       const std::optional<RtlTileSource>& rtl, const std::string& attention_option) {
  const mapper::Placement placement = place_for_run(ck, hw, policy, so.steps);
  const cmodel::cim::TileParams tile = hw.tile(ck.config.head_dim());
  TileFactory tiles = cmodel_tiles(tile);
  if (so.backends.attention == BackendKind::rtl) {
    if (!rtl)
      fail(attention_option, "backend", "rtl", "this kvcim was built without the RTL (KVCIM_WITH_RTL=OFF)");
    // what the RTL tile cannot be, named by the spec's field
    if (tile.kind != cmodel::cim::TileKind::digital)
      fail(hw.source, "kv.kind", "analog", "the RTL tile is digital: run the analog tile with --attention-backend cim");
    if (tile.kb() != tile.vb())
      fail(hw.source, "kv.k_bits", std::to_string(tile.kb()),
           "the RTL tile stores K and V at one width: kv.k_bits must equal kv.v_bits (" +
               std::to_string(tile.vb()) + ")");
    if (!(rtl->params == tile))
      fail(hw.source, "kv", "tile parameters of the spec",
           "the RTL tile is built at head_dim " + std::to_string(rtl->params.head_dim) + ", " +
               std::to_string(rtl->params.tokens) + " tokens, " + std::to_string(rtl->params.kv_bits) +
               "-bit KV, exp_frac " + std::to_string(rtl->params.exp_frac) + ", " +
               std::to_string(rtl->params.prob_bits) + "-bit probabilities");
    tiles = rtl->make;
  }
  const GenerationResult r = run_generation(ck, tok, so, session_hardware(ck, placement, tiles));
  return run_report(r, so, placement, inputs);
}

std::string read_eval_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "file", "unreadable", "cannot open the evaluation text");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string default_eval_text_path() {
  return data_dir() + "/testdata/eval/tinystories_eval.txt";
}

}  // namespace kvcim::runtime
