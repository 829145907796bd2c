// Subcommands of the kvcim tool. Each adds itself to the app; its callback runs the command and
// may throw kvcim::Error, which main() prints on one line before exiting with code 2.
#pragma once
#include <CLI/CLI.hpp>

namespace kvcim::cli {

void add_generate(CLI::App& app);
void add_logits(CLI::App& app);
void add_tokenize(CLI::App& app);
void add_run(CLI::App& app);
void add_explain(CLI::App& app);
void add_map(CLI::App& app);
void add_macro(CLI::App& app);
void add_convert(CLI::App& app);
#ifdef KVCIM_HAVE_RTL
void add_cosim(CLI::App& app);
#endif

// Parses "1,5,9" into ids; throws kvcim::Error naming `option` on bad input.
std::vector<int> parse_ids(const std::string& option, const std::string& text);

}  // namespace kvcim::cli
