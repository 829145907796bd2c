// Subcommands of the kvcim tool. Each adds itself to the app; its callback runs the command and
// may throw kvcim::Error, which main() prints on one line before exiting with code 2.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvcim/error.hpp"
#include "kvcim/rtl/rtl_tiles.hpp"

namespace kvcim::cli {

void add_generate(CLI::App& app);
void add_logits(CLI::App& app);
void add_tokenize(CLI::App& app);
void add_run(CLI::App& app);
void add_explain(CLI::App& app);
void add_map(CLI::App& app);
void add_macro(CLI::App& app);
void add_baseline(CLI::App& app);
void add_compare(CLI::App& app);
void add_convert(CLI::App& app);
void add_rtl(CLI::App& app);
#ifdef KVCIM_HAVE_RTL
void add_cosim(CLI::App& app);
#endif

// The nucleus sampling threshold as --top-p; the old spelling --topp is still accepted (hidden
// from --help) with a one-line deprecation note on stderr.
inline void add_top_p_option(CLI::App* cmd, float& top_p) {
  cmd->add_option("--top-p", top_p, "nucleus sampling threshold")->capture_default_str();
  cmd->add_option_function<float>(
         "--topp",
         [&top_p](const float& v) {
           std::fprintf(stderr, "kvcim: --topp is deprecated, use --top-p\n");
           top_p = v;
         },
         "deprecated spelling of --top-p")
      ->group("");
}

// The RTL tile linked into this program (none without the RTL), and on-demand builds into the
// default cache with a progress line on stderr unless `quiet` (cmd_rtl.cpp).
std::optional<rtl::RtlTileSource> linked_rtl_tile();
rtl::RtlBuildOptions rtl_build_options(bool quiet);

// Parses "1,5,9" into ids; throws kvcim::Error naming `option` on bad input.
// A library error as the command line says it: an option named where it set the field.
std::string error_line(const Error& e);

std::vector<int> parse_ids(const std::string& option, const std::string& text);

}  // namespace kvcim::cli
