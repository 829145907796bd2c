// Fuzz target: the recipe of on-demand RTL tile builds (kvcim-rtl-recipe.json, written by
// rtl/rtl_recipe.cmake into the build folder, read by rtl/sim/rtl_build_steps.cpp before any tool
// runs). A refusal must be a one-line kvcim::Error naming the file; an accepted recipe keeps the
// file's text (it is hashed into the cache key) and names the tools it will run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "../../rtl/sim/rtl_build_steps.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kvcim::fuzz::write_input("kvcim-rtl-recipe.json", data, size);
  kvcim::fuzz::expect_clean(path, [&] {
    const kvcim::rtl::build::Recipe r = kvcim::rtl::build::read_recipe(path);
    if (r.text != std::string(reinterpret_cast<const char*>(data), size))
      kvcim::fuzz::broken("the recipe's text is not the file's", r.text);
    if (r.path != path) kvcim::fuzz::broken("the recipe names another file", r.path);
  });
  return 0;
}
