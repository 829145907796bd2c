// llama2.c checkpoint format: 7 int32 header (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len; a negative vocab_size means the classifier is stored separately), then
// float32 tensors in a fixed order, with the legacy freq_cis tables before the classifier.
#pragma once
#include <cstdint>
#include <string>

#include "kvcim/cmodel/weights.hpp"

namespace kvcim::cmodel {

struct Checkpoint {
  Config config;
  Weights weights;
  std::string path;
};

// Reads only the header, validated against the file length. Throws kvcim::Error.
Config read_checkpoint_config(const std::string& path);
// How a loaded checkpoint's floats are held in memory.
//  resident: the file mapped writable and private (a change stays in this process); the pages
//    the load checks stay in memory for the decode that reads them next.
//  on_demand: mapped read-only (a write faults) and not read at load: its pages are mapped by
//    the one pass that reads them and given back by it (WeightMatrix::release_pages). For a
//    caller that reads every matrix once and checks what it reads, as a Model with
//    WeightFormat::int8 does: the load checks the header, the length and the norm vectors, and
//    the quantiser refuses a non-finite weight (the Model's error names the file and the
//    tensor). Values are the same either way. A checkpoint that is not mapped (a Hugging Face
//    folder, a file that cannot be mapped) is resident and checked whatever is asked.
//  read_only: checked whole at load as resident, but mapped read-only (a write faults), so that
//    a pass reading a matrix once for many tokens may give its pages back afterwards
//    (WeightMatrix::release_pages) and the next read them again from the page cache: what
//    `kvcim run` loads, whose evaluation streams the float reference's matrices chunk by chunk
//    (ReferenceBackend::set_streamed) instead of holding them all beside the macros.
enum class Residency { resident, on_demand, read_only };

// Reads and validates the whole checkpoint. Throws kvcim::Error.
Checkpoint read_checkpoint(const std::string& path, Residency residency = Residency::resident);

// Random weights of any shape from a seed (uniform, scaled by 1/sqrt(fan-in); norms near 1), so
// tests and benchmarks can cover GQA and MHA, shared and separate classifiers and odd sizes.
Weights random_weights(const Config& config, uint64_t seed);
// Writes a checkpoint in llama2.c's format (atomically: temporary file, then rename).
void write_checkpoint(const std::string& path, const Config& config, const Weights& weights);

// A model path, whichever its kind: a folder is a Hugging Face checkpoint (config.json and
// safetensors: hf_checkpoint.hpp), a file a llama2.c checkpoint. Every command and binding that
// takes a model loads it through these.
bool is_hf_checkpoint(const std::string& path);
Checkpoint load_checkpoint(const std::string& path, Residency residency = Residency::resident);
Config load_checkpoint_config(const std::string& path);
// The tokenizer that goes with a model path: <folder>/tokenizer.json for a Hugging Face folder,
// the embedded tok512 otherwise.
std::string tokenizer_path_for(const std::string& model_path);

// The embedded default model and tokenizer shipped in models/.
std::string default_model_path();
std::string default_tokenizer_path();

}  // namespace kvcim::cmodel
