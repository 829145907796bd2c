// Hugging Face Llama checkpoints: a folder holding config.json and model.safetensors (or the
// shards named by model.safetensors.index.json), tensors F32, F16 or BF16. Read into, and written
// from, the same Config and Weights as llama2.c checkpoints.
//
// The one difference of layout: llama2.c's RoPE rotates adjacent pairs (x[2i], x[2i+1]) of each
// head, Hugging Face's rotates halves (x[i], x[i + head_dim/2]). The rows of wq and wk are
// permuted between the two when read and written (convert_llama_weights_to_hf.py's permute:
// w.view(n_heads, head_dim/2, 2, dim).transpose(1, 2).reshape(...)), so the forward pass is one.
#pragma once
#include <string>
#include <string_view>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/safetensors.hpp"

namespace kvcim::cmodel {

// config.json text -> Config (`where` names the file in errors). Llama only: architectures
// LlamaForCausalLM / model_type llama; hidden_size, intermediate_size, num_hidden_layers,
// num_attention_heads, vocab_size, max_position_embeddings required; num_key_value_heads,
// rope_theta (10000), rms_norm_eps (1e-6), tie_word_embeddings (false) as transformers' defaults.
Config parse_hf_config(const std::string& where, std::string_view text);
// Config -> config.json text (`dtype` recorded as torch_dtype).
std::string hf_config_json(const Config& config, DType dtype);

// Reads only <dir>/config.json.
Config read_hf_config(const std::string& dir);
// Reads and checks the whole folder: every tensor present, of the shape config.json implies,
// finite; no tensor left over (except rotary_emb.inv_freq buffers). Throws kvcim::Error.
Checkpoint read_hf_checkpoint(const std::string& dir);
// Writes config.json, model.safetensors (tensors as `dtype`) and, when given, tokenizer.json into
// the new folder `dir`, which must not exist: the files are written into a temporary folder
// beside it, which is renamed to `dir` only when all are written.
void write_hf_checkpoint(const std::string& dir, const Config& config, const Weights& weights,
                         DType dtype, const std::string& tokenizer_json = "");

// The row permutation of wq (n_heads) or wk (n_kv_heads) between the two RoPE layouts.
Matrix rope_rows_to_hf(MatrixRef w, int heads);
Matrix rope_rows_from_hf(MatrixRef w, int heads);

}  // namespace kvcim::cmodel
