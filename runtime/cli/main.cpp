// kvcim: the command-line tool. Wrong arguments or files: one line on stderr, exit code 2.
#include <cstdio>
#include <exception>
#include <iostream>

#include "commands.hpp"
#include "kvcim/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kvcim: compute-in-memory co-design for Transformer inference"};
  app.require_subcommand(1);
  app.set_version_flag("--version", KVCIM_VERSION);
  try {
    // Inside the try: the options' defaults ask for the data root, which may be missing.
    kvcim::cli::add_generate(app);
    kvcim::cli::add_logits(app);
    kvcim::cli::add_tokenize(app);
    kvcim::cli::add_run(app);
    kvcim::cli::add_explain(app);
    kvcim::cli::add_map(app);
    kvcim::cli::add_macro(app);
    kvcim::cli::add_baseline(app);
    kvcim::cli::add_compare(app);
    kvcim::cli::add_convert(app);
    kvcim::cli::add_rtl(app);
#ifdef KVCIM_HAVE_RTL
    kvcim::cli::add_cosim(app);
#endif
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kvcim: " << e.what() << " (see kvcim --help)\n";
    return 2;
  } catch (const kvcim::Error& e) {
    std::cout.flush();
    std::cerr << "kvcim: " << kvcim::cli::error_line(e) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "kvcim: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
