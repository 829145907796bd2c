// The command line's names for library fields. Library errors name the struct and field they
// come from ("run: steps = 0: expected a positive number"); here, and only here, a field that a
// command-line option sets is named by that option instead ("--steps: steps = 0: ...").
#include <string>

#include "commands.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cli {
namespace {

struct FieldFlag {
  const char* where;
  const char* field;  // "*": every field of `where`
  const char* flag;
};

// Rows name the `where` of a fail() call in mapper/ or runtime/ and the option that sets it.
constexpr FieldFlag kFieldFlags[] = {
    {"run", "steps", "--steps"},
    {"run", "prompt tokens", "--prompt"},
    {"run", "prompts", "--prompt"},
    {"run", "eval_tokens", "--eval-tokens"},
    {"run", "sequences", "--batch"},
    {"run", "linear_backend", "--linear-backend"},
    {"run", "attention_backend", "--attention-backend"},
    {"run", "node.node_nm", "--node"},
    {"run", "node.voltage_v", "--node"},
    {"run", "area_mm2", "--area-mm2"},
    {"explain", "steps", "--steps"},
    {"explain", "prompt tokens", "--prompt"},
    {"eval", "eval_tokens", "--eval-tokens"},
    {"eval", "eval_text tokens", "--eval-text"},
    {"map", "context", "--context"},
    {"baseline", "name", "--baseline"},
    {"map", "macros", "--fit"},
    {"policy", "*", "--policy"},
    {"shape", "preset", "--preset"},
    {"shape", "*", "--shape"},
    {"cosim", "trials", "--trials"},
    {"cosim", "tokens", "--tokens"},
    {"cosim", "backpressure", "--backpressure"},
    {"cosim", "port_episodes", "--port-episodes"},
    {"cosim", "config", "--config"},
    {"cosim", "trace", "--trace"},
};

}  // namespace

std::string error_line(const Error& e) {
  for (const FieldFlag& f : kFieldFlags)
    if (e.where() == f.where && (std::string(f.field) == "*" || e.field() == f.field))
      return std::string(f.flag) + ": " + e.detail();
  return e.what();
}

}  // namespace kvcim::cli
