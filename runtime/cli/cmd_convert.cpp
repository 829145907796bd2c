// kvcim convert: a llama2.c checkpoint (and tokenizer) to a Hugging Face folder, and back.
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/hf_checkpoint.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/error.hpp"
#include "kvcim/io.hpp"

namespace kvcim::cli {

using namespace kvcim::cmodel;

void add_convert(CLI::App& app) {
  struct Opts {
    std::string model = default_model_path(), out, tokenizer, tokenizer_out, dtype = "f32";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "convert",
      "llama2.c checkpoint file -> Hugging Face folder (config.json, model.safetensors, "
      "tokenizer.json), or a Hugging Face folder -> llama2.c checkpoint file");
  cmd->add_option("--model", o->model, "input: llama2.c checkpoint file or Hugging Face folder")
      ->capture_default_str();
  cmd->add_option("--out", o->out, "output: a folder (from a .bin) or a .bin file (from a folder); must not exist")
      ->required();
  cmd->add_option("--tokenizer", o->tokenizer,
                  "tokenizer to convert along (default: the model folder's tokenizer.json, else the "
                  "embedded tok512; 'none' skips it)");
  cmd->add_option("--tokenizer-out", o->tokenizer_out,
                  "folder -> .bin only: where to write the llama2.c tokenizer (default: none)");
  cmd->add_option("--dtype", o->dtype, "tensor type of a Hugging Face output: f32 | f16 | bf16")
      ->capture_default_str();
  cmd->callback([o] {
    std::error_code ec;
    if (std::filesystem::exists(o->out, ec))
      fail("--out", "output", "'" + o->out + "' exists", "refusing to overwrite: name a new path");
    const DType dtype = parse_dtype("--dtype", o->dtype);
    if (is_hf_checkpoint(o->model)) {  // what llama2.c's format cannot hold, before any tensor is read
      const Config c = load_checkpoint_config(o->model);
      if (const std::string what = c.llama2c_unsupported(); !what.empty())
        fail(o->model, "model", std::string(architecture_name(c.architecture)) + " with " + what,
             "a llama2.c checkpoint cannot hold it");
    }
    const Checkpoint ck = load_checkpoint(o->model);
    const std::string tok_path = o->tokenizer.empty() ? tokenizer_path_for(o->model) : o->tokenizer;
    const bool with_tokenizer = o->tokenizer != "none";
    if (is_hf_checkpoint(o->model)) {
      if (!o->tokenizer_out.empty() && std::filesystem::exists(o->tokenizer_out, ec))
        fail("--tokenizer-out", "output", "'" + o->tokenizer_out + "' exists", "refusing to overwrite");
      std::string tok_bytes;
      if (!o->tokenizer_out.empty())
        tok_bytes = Tokenizer::load(tok_path, ck.config.vocab_size).llama2c_bytes();
      write_checkpoint(o->out, ck.config, ck.weights);  // llama2.c keeps RoPE theta 10000, eps 1e-5
      if (!tok_bytes.empty()) write_file_atomic(o->tokenizer_out, tok_bytes);
      if (ck.config.rope_theta != kRopeTheta || ck.config.rms_norm_eps != kRmsNormEps)
        std::cerr << "kvcim convert: note: rope_theta " << ck.config.rope_theta << " and rms_norm_eps "
                  << ck.config.rms_norm_eps << " are not stored by the llama2.c format (which means 10000 and 1e-05)\n";
    } else {
      if (!o->tokenizer_out.empty())
        fail("--tokenizer-out", "option", o->tokenizer_out, "only for a Hugging Face folder -> .bin conversion");
      const std::string tok_json =
          with_tokenizer ? Tokenizer::load(tok_path, ck.config.vocab_size).hf_json() : std::string();
      write_hf_checkpoint(o->out, ck.config, ck.weights, dtype, tok_json);
    }
  });
}

}  // namespace kvcim::cli
