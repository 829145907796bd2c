// Mapping policies: how CIM capacity is split between weights and the KV cache, the KV page
// size, what happens when KV capacity runs out, GQA sharing, replication, concurrent sequences.
// Written on the command line as "overflow=spill,page=32,kv_fraction=0.5,replicas=2".
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace kvcim::mapper {

// When a KV page is needed and no CIM slot is free:
//   fail   - a kvcim::Error that says how much context fits;
//   spill  - the stream's oldest full on-chip page moves to off-chip memory (attention over it is
//            computed conventionally); without one, the new page is placed off-chip;
//   window - the stream's oldest page is dropped (sliding-window attention); the window is
//            `window_tokens` rounded up to whole pages (0: as many pages as fit). With
//            `sink_tokens`, the stream's first pages (sink_tokens rounded up) are never dropped:
//            the attention sinks of StreamingLLM (Xiao et al. 2024), counted inside the window.
enum class KvOverflow { fail, spill, window };
const char* name(KvOverflow o);
// Which page the window drops: its oldest (after the sinks), or the one that has drawn the least
// attention so far (heavy-hitter eviction, H2O, Zhang et al. 2023, per page; the newest full page
// is kept as H2O keeps its recent tokens). The page counts are the same; only which pages differs.
enum class KvEvict { oldest, h2o };
const char* name(KvEvict e);
// What the window keeps and drops: whole pages (a stream's oldest page, or its least-drawn one,
// leaves when a new page is needed; sinks and window rounded up to pages), or single tokens (the
// stream keeps exactly `window_tokens` tokens: its first `sink_tokens`, the newest ones, and under
// h2o the heavy hitters; an evicted token's slot is overwritten in place by the new token).
enum class KvGranularity { page, token };
const char* name(KvGranularity g);

struct Policy {
  // Fraction of the macros reserved for the KV cache; negative = weights first (weights take
  // the macros they need, the KV cache gets the rest).
  double kv_fraction = -1.0;
  int tokens_per_page = 0;    // 0 = the attention tile's capacity (one page per tile)
  bool gqa_sharing = true;    // one KV page serves every query head of its group
  int replicas = 1;           // copies of every weight matrix (parallel sequences)
  int sequences = 1;          // concurrent sequences, each with its own KV pages
  KvOverflow overflow = KvOverflow::fail;
  int64_t window_tokens = 0;  // window policy only
  int64_t sink_tokens = 0;    // window policy only: the first tokens, kept
  KvEvict evict = KvEvict::oldest;  // window policy only
  KvGranularity evict_granularity = KvGranularity::page;  // window policy only
  // evict=h2o at token granularity: the newest tokens always kept (H2O's recent window); the rest
  // of the window after the sinks holds the heavy hitters. 0 = half of (window - sinks), as H2O's
  // equal split of its budget.
  int64_t recent_tokens = 0;
  bool token_window() const {
    return overflow == KvOverflow::window && evict_granularity == KvGranularity::token;
  }

  // Throws kvcim::Error naming `where` and the field.
  void validate(const std::string& where) const;
};

// One key table (mapper/policy.cpp) drives every form of a policy. Keys, by field name with the
// text form's short alias: overflow (fail|spill|window), tokens_per_page or page (tokens per page,
// tile or 0: the tile's), kv_fraction (0..1 or auto), gqa_sharing (on|off), replicas, sequences,
// window_tokens or window (tokens, fit; selects overflow=window), sink_tokens or sinks (tokens;
// selects overflow=window), evict (oldest|h2o), evict_granularity or granularity (page|token;
// token selects overflow=window), recent_tokens or recent (tokens). Either spelling is accepted in every form;
// unknown keys suggest the closest. Errors name the policy's field: "policy: page = 7: ...".
void set_policy_field(Policy& p, const std::string& key, const nlohmann::json& value);
// Text: "overflow=spill,page=32" (a bare word is the overflow).
Policy parse_policy(const std::string& text, Policy base = Policy{});
// Text as a caller gave it, parsed once: the policy on `base`, and whether the text chose the
// overflow (overflow=..., a bare word, or a window, sinks, evict=h2o or granularity=token key, which select
// overflow=window), so that a caller can apply its own default when it did not.
struct PolicyText {
  Policy policy;
  bool overflow_named = false;
};
PolicyText parse_policy_text(const std::string& text, Policy base = Policy{});
// A JSON object (a Python dict, a YAML mapping) of the same keys.
Policy policy_from_json(const nlohmann::json& j, Policy base = Policy{});
// Every field by its name; kv_fraction is "auto" when weights come first.
nlohmann::json policy_to_json(const Policy& p);
// The short text form, which parse_policy reads back.
std::string to_string(const Policy& p);

}  // namespace kvcim::mapper
