// Paths the tests share: the embedded model and the golden data copied from llama2.c's run.c.
#pragma once
#include <string>

namespace kvcim::test {
inline std::string source_dir() { return KVCIM_SOURCE_DIR; }
inline std::string golden(const std::string& name) { return source_dir() + "/testdata/golden/" + name; }
inline std::string model_path() { return source_dir() + "/models/stories260K.bin"; }
inline std::string tokenizer_path() { return source_dir() + "/models/tok512.bin"; }
}  // namespace kvcim::test
