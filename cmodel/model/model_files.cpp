// The one place that decides what kind of checkpoint a model path is.
#include <filesystem>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/hf_checkpoint.hpp"

namespace kvcim::cmodel {

bool is_hf_checkpoint(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

Checkpoint load_checkpoint(const std::string& path, Residency residency) {
  return is_hf_checkpoint(path) ? read_hf_checkpoint(path) : read_checkpoint(path, residency);
}

Config load_checkpoint_config(const std::string& path) {
  return is_hf_checkpoint(path) ? read_hf_config(path) : read_checkpoint_config(path);
}

std::string tokenizer_path_for(const std::string& model_path) {
  return is_hf_checkpoint(model_path) ? model_path + "/tokenizer.json" : default_tokenizer_path();
}

}  // namespace kvcim::cmodel
