// The steps of an on-demand RTL tile build (rtl_build.cpp orchestrates them): the recipe CMake
// wrote, the tools it names run as child processes, the module compiled and linked in a folder.
#pragma once
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"

namespace kvcim::rtl::build {

// kvcim-rtl-recipe.json (rtl/rtl_recipe.cmake), parsed.
struct Recipe {
  std::string path, text;  // the file and its content (hashed into the key)
  std::string verilator, verilator_version, cxx, ar;
  std::vector<std::string> sv_sources, verilator_args, tile_sources, module_sources, cxx_flags, defines,
      include_dirs, archive, libs, link_flags, hash_dirs;
};

// Reads and checks the recipe: a missing or malformed file is a kvcim::Error naming it.
Recipe read_recipe(const std::string& path);
// The same from the file's text (`path` names it in errors).
Recipe parse_recipe(const std::string& text, const std::string& path);

// The tools the recipe names exist: else one kvcim::Error saying what to install.
void check_tools(const Recipe& r);
// The sources and built libraries it names exist: else one kvcim::Error saying what to build.
void check_inputs(const Recipe& r);

// 16 hex digits over the recipe, every input file's content (sources, the headers under
// hash_dirs, the objects and libraries linked), the Verilator version and the module ABI.
std::string inputs_hash(const Recipe& r);

// Verilates the tile at `p` into `dir`/model and builds `dir`/`module_file` from it; `dir` exists
// and is empty. A failing tool is a kvcim::Error quoting its first error line.
void build_module(const Recipe& r, const cmodel::cim::TileParams& p, const std::string& dir,
                  const std::string& module_file);

}  // namespace kvcim::rtl::build
