// Fuzz target: the policy's one key table (mapper/policy.cpp), from the text of --policy and, when
// the input is a JSON document, from a mapping (a Python dict, a YAML mapping). A refusal must be
// a one-line kvcim::Error naming the policy; an accepted policy must read back from each of its
// written forms: the text (parse_policy(to_string(p))) and the mapping (policy_to_json).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/mapper/policy.hpp"

using namespace kvcim::mapper;

namespace {

void round_trips(const Policy& p) {
  const std::string text = to_string(p);
  if (to_string(parse_policy(text)) != text) kvcim::fuzz::broken("text does not read back", text);
  const nlohmann::json j = policy_to_json(p);
  if (policy_to_json(policy_from_json(j)) != j) kvcim::fuzz::broken("mapping does not read back", j.dump());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  kvcim::fuzz::expect_clean("policy", [&] { round_trips(parse_policy(text)); });
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) kvcim::fuzz::expect_clean("policy", [&] { round_trips(policy_from_json(j)); });
  return 0;
}
