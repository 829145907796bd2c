// generate, logits, tokenize: the reference model from the command line.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/error.hpp"
#include "kvcim/text.hpp"
#include "kvcim/io.hpp"

namespace kvcim::cli {

using namespace kvcim::cmodel;

std::vector<int> parse_ids(const std::string& option, const std::string& text) {
  std::vector<int> ids;
  for (const std::string& item : split(text, ',')) {
    const int64_t value = parse_integer(item).value_or(-1);
    if (value < 0 || value > (1L << 30))
      fail(option, "token id", "'" + item + "'", "expected non-negative integers separated by commas");
    ids.push_back(static_cast<int>(value));
  }
  return ids;
}

void add_generate(CLI::App& app) {
  struct Opts {
    std::string model = default_model_path(), tokenizer, prompt, weights = "float";
    int steps = 256;
    float temperature = 1.0f, top_p = 0.9f;
    uint64_t seed = 42;
    bool ids = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("generate", "Generate text with the float reference model, as llama2.c's run.c (or with int8 weights)");
  cmd->add_option("--model", o->model, "model: llama2.c checkpoint file or Hugging Face folder (config.json + safetensors)")->capture_default_str();
  cmd->add_option("--tokenizer", o->tokenizer, "tokenizer: llama2.c .bin or tokenizer.json (default: the model folder's tokenizer.json, else the embedded tok512)");
  cmd->add_option("--prompt", o->prompt, "prompt text")->required();
  cmd->add_option("--steps", o->steps, "forward passes (positions 0..steps-1)")->capture_default_str();
  cmd->add_option("--temperature", o->temperature, "0 = greedy")->capture_default_str();
  add_top_p_option(cmd, o->top_p);
  cmd->add_option("--seed", o->seed, "sampler seed")->capture_default_str();
  cmd->add_flag("--ids", o->ids, "print only the token ids fed at positions 0..steps-1");
  cmd->add_option("--weights", o->weights,
                  "float: the float32 reference; int8: 8-bit per-channel weights and per-token "
                  "activations, int32 accumulation (attention stays float)")
      ->capture_default_str();
  cmd->callback([o] {
    const WeightFormat format = parse_weight_format("--weights", o->weights);
    auto model = Model::load(o->model, format);
    const Config& c = model->config();
    Tokenizer tok = Tokenizer::load(
        o->tokenizer.empty() ? tokenizer_path_for(o->model) : o->tokenizer, c.vocab_size);
    Sampler sampler(o->temperature, o->top_p, o->seed);
    if (o->steps <= 0) fail("--steps", "steps", std::to_string(o->steps), "expected a positive number");
    if (o->steps > c.seq_len)
      fail("--steps", "steps", std::to_string(o->steps),
           "exceeds the model's context of " + std::to_string(c.seq_len) + " positions");
    std::vector<int> prompt = tok.encode_prompt(o->prompt);
    if (static_cast<int>(prompt.size()) > o->steps)
      fail("--prompt", "prompt tokens", std::to_string(prompt.size()),
           "longer than --steps " + std::to_string(o->steps));
    std::vector<int> fed{prompt[0]};
    int token = prompt[0];
    for (int pos = 0; pos < o->steps; ++pos) {
      const Vector& logits = model->forward(token, pos);
      const int next = pos + 1 < static_cast<int>(prompt.size()) ? prompt[pos + 1] : sampler.sample(logits);
      if (tok.ends_text(next)) break;  // run.c stops when BOS is sampled (a Hugging Face model: EOS)
      if (!o->ids) std::cout << tok.printable(token, next) << std::flush;
      token = next;
      if (pos + 1 < o->steps) fed.push_back(next);
    }
    if (o->ids) {
      for (size_t i = 0; i < fed.size(); ++i) std::cout << (i ? "," : "") << fed[i];
    }
    std::cout << "\n";
  });
}

void add_logits(CLI::App& app) {
  struct Opts {
    std::string model = default_model_path(), tokens, out, weights = "float";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("logits", "Teacher-forced float32 logits [tokens, vocab] as .npy (float or int8 weights)");
  cmd->add_option("--model", o->model, "model: llama2.c checkpoint file or Hugging Face folder (config.json + safetensors)")->capture_default_str();
  cmd->add_option("--tokens", o->tokens, "token ids, comma separated")->required();
  cmd->add_option("--out", o->out, "output .npy file")->required();
  cmd->add_option("--weights", o->weights, "float | int8 (as in kvcim generate)")->capture_default_str();
  cmd->callback([o] {
    const WeightFormat format = parse_weight_format("--weights", o->weights);
    const std::vector<int> ids = parse_ids("--tokens", o->tokens);
    auto model = Model::load(o->model, format);
    for (int id : ids)
      if (id >= model->config().vocab_size)
        fail("--tokens", "token id", std::to_string(id),
             "outside the vocabulary of " + std::to_string(model->config().vocab_size));
    const Matrix logits = model->logits(ids);
    write_file_atomic(o->out, npy_bytes(logits.data(), {static_cast<long>(logits.rows()),
                                                         static_cast<long>(logits.cols())}));
  });
}

void add_tokenize(CLI::App& app) {
  struct Opts {
    std::string tokenizer = default_tokenizer_path(), text;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids of a text (first the special tokens the tokenizer adds: BOS, if it has one)");
  cmd->add_option("--tokenizer", o->tokenizer,
                  "llama2.c tokenizer .bin, tokenizer.json or a Hugging Face model folder")
      ->capture_default_str();
  cmd->add_option("--text", o->text, "text to encode")->required();
  cmd->callback([o] {
    Tokenizer tok = Tokenizer::load(o->tokenizer);
    const std::vector<int> ids = tok.encode(o->text, true, false);
    for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? "," : "") << ids[i];
    std::cout << "\n";
  });
}

}  // namespace kvcim::cli
