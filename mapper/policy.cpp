#include "kvcim/mapper/policy.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/enum_names.hpp"
#include "kvcim/error.hpp"
#include "kvcim/text.hpp"

namespace kvcim::mapper {

constexpr std::array kKvOverflowNames{"fail", "spill", "window"};
static_assert(kKvOverflowNames.size() == enum_count(KvOverflow::window));
const char* name(KvOverflow o) { return enum_name(o, kKvOverflowNames); }

const char* name(KvEvict e) { return e == KvEvict::h2o ? "h2o" : "oldest"; }

const char* name(KvGranularity g) { return g == KvGranularity::token ? "token" : "page"; }

void Policy::validate(const std::string& where) const {
  if (!(kv_fraction < 0 || (kv_fraction >= 0 && kv_fraction <= 1)) || std::isnan(kv_fraction))
    fail(where, "kv_fraction", std::to_string(kv_fraction), "expected 0..1 or auto");
  if (tokens_per_page < 0)
    fail(where, "page", std::to_string(tokens_per_page), "expected a positive token count");
  if (replicas < 1 || replicas > 1024)
    fail(where, "replicas", std::to_string(replicas), "expected 1..1024");
  if (sequences < 1 || sequences > 65536)
    fail(where, "sequences", std::to_string(sequences), "expected 1..65536");
  if (window_tokens < 0)
    fail(where, "window", std::to_string(window_tokens), "expected >= 0 tokens (0: as many as fit)");
  if (window_tokens > 0 && overflow != KvOverflow::window)
    fail(where, "window", std::to_string(window_tokens), "only meaningful with overflow=window");
  if (sink_tokens < 0)
    fail(where, "sinks", std::to_string(sink_tokens), "expected >= 0 tokens");
  if (sink_tokens > 0 && overflow != KvOverflow::window)
    fail(where, "sinks", std::to_string(sink_tokens), "only meaningful with overflow=window");
  if (evict != KvEvict::oldest && overflow != KvOverflow::window)
    fail(where, "evict", name(evict), "only meaningful with overflow=window");
  if (sink_tokens > 0 && window_tokens > 0 && sink_tokens >= window_tokens)
    fail(where, "sinks", std::to_string(sink_tokens),
         "fewer tokens than the window (" + std::to_string(window_tokens) + ")");
  if (evict_granularity != KvGranularity::page && overflow != KvOverflow::window)
    fail(where, "granularity", name(evict_granularity), "only meaningful with overflow=window");
  if (recent_tokens < 0)
    fail(where, "recent", std::to_string(recent_tokens), "expected >= 0 tokens (0: half the window after the sinks)");
  if (recent_tokens > 0 && (evict != KvEvict::h2o || evict_granularity != KvGranularity::token))
    fail(where, "recent", std::to_string(recent_tokens), "only meaningful with evict=h2o,granularity=token");
  if (recent_tokens > 0 && window_tokens > 0 && sink_tokens + recent_tokens >= window_tokens)
    fail(where, "recent", std::to_string(recent_tokens),
         "sinks + recent must leave the window (" + std::to_string(window_tokens) +
             " tokens) at least one heavy-hitter token");
}

namespace {

using nlohmann::json;
constexpr const char* kWhere = "policy";

// A value as the error names it: text quoted, numbers and booleans as written.
// (Built up with append: GCC 12 warns a false -Wrestrict on "'" + s + "'" when not in a unity batch.)
std::string shown(const json& v) {
  if (!v.is_string()) return v.dump();
  std::string q = "'";
  q.append(v.get_ref<const std::string&>()).push_back('\'');
  return q;
}

int64_t integer(const char* key, const json& v, int64_t lo, int64_t hi) {
  std::optional<int64_t> n;
  if (v.is_number_integer()) n = v.get<int64_t>();
  else if (v.is_string()) n = parse_integer(v.get<std::string>());
  if (!n || *n < lo || *n > hi)
    fail(kWhere, key, shown(v), "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return *n;
}

template <typename Enum>
Enum choice(const char* key, const json& v, const std::vector<std::string>& names) {
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  auto it = std::find(names.begin(), names.end(), text);
  if (it == names.end()) fail(kWhere, key, shown(v), cmodel::energy::suggestion(text, names));
  return static_cast<Enum>(it - names.begin());
}

double fraction(const char* key, const json& v) {
  if (v.is_null() || (v.is_string() && v.get<std::string>() == "auto")) return -1.0;
  double f = std::nan("");
  if (v.is_number() && !v.is_boolean()) {
    f = v.get<double>();
    if (f < 0) return -1.0;  // a negative fraction is the struct's "weights first"
  } else if (v.is_string()) {
    const std::string text = v.get<std::string>();
    size_t used = 0;
    try {
      f = std::stod(text, &used);
    } catch (...) {
      used = 0;
    }
    if (text.empty() || used != text.size()) f = std::nan("");
  }
  if (!(f >= 0 && f <= 1)) fail(kWhere, key, shown(v), "expected a fraction in [0, 1] or auto");
  return f;
}

bool on_off(const char* key, const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  const std::string t = v.is_string() ? v.get<std::string>() : v.dump();
  if (t == "on" || t == "true" || t == "1") return true;
  if (t == "off" || t == "false" || t == "0") return false;
  fail(kWhere, key, shown(v), "expected on or off");
}

// A count of tokens that, when given, selects the window policy ("window=64"); "fit" (window
// only) is as many as fit. Zero leaves the overflow as it is (a dict of a fail policy says 0).
int64_t window_count(Policy& p, const char* key, const json& v, bool fit_allowed) {
  if (fit_allowed && v.is_string() && v.get<std::string>() == "fit") {
    p.overflow = KvOverflow::window;
    return 0;
  }
  const int64_t n = integer(key, v, 0, int64_t{1} << 40);
  if (n > 0) p.overflow = KvOverflow::window;
  return n;
}

// The one vocabulary of a policy. `name` is the struct's field, and the key of a dict, a YAML
// mapping and the report's JSON; `alias` is the short word the text form writes ("page=16").
// Text, dict and YAML all go through `set`; either spelling is accepted everywhere.
struct PolicyKey {
  const char* name;
  const char* alias;
  void (*set)(Policy&, const json&);
  json (*get)(const Policy&);
};

const PolicyKey kPolicyKeys[] = {
    {"overflow", "overflow",
     [](Policy& p, const json& v) { p.overflow = choice<KvOverflow>("overflow", v, {"fail", "spill", "window"}); },
     [](const Policy& p) { return json(name(p.overflow)); }},
    {"tokens_per_page", "page",
     [](Policy& p, const json& v) {
       p.tokens_per_page = v.is_string() && v.get<std::string>() == "tile"
                               ? 0
                               : static_cast<int>(integer("page", v, 0, 1 << 20));
     },
     [](const Policy& p) { return json(p.tokens_per_page); }},
    {"kv_fraction", "kv_fraction",
     [](Policy& p, const json& v) { p.kv_fraction = fraction("kv_fraction", v); },
     [](const Policy& p) { return p.kv_fraction < 0 ? json("auto") : json(p.kv_fraction); }},
    {"gqa_sharing", "gqa_sharing",
     [](Policy& p, const json& v) { p.gqa_sharing = on_off("gqa_sharing", v); },
     [](const Policy& p) { return json(p.gqa_sharing); }},
    {"replicas", "replicas",
     [](Policy& p, const json& v) { p.replicas = static_cast<int>(integer("replicas", v, 1, 1024)); },
     [](const Policy& p) { return json(p.replicas); }},
    {"sequences", "sequences",
     [](Policy& p, const json& v) { p.sequences = static_cast<int>(integer("sequences", v, 1, 65536)); },
     [](const Policy& p) { return json(p.sequences); }},
    {"window_tokens", "window",
     [](Policy& p, const json& v) { p.window_tokens = window_count(p, "window", v, true); },
     [](const Policy& p) { return json(p.window_tokens); }},
    {"sink_tokens", "sinks",
     [](Policy& p, const json& v) { p.sink_tokens = window_count(p, "sinks", v, false); },
     [](const Policy& p) { return json(p.sink_tokens); }},
    {"evict", "evict",
     [](Policy& p, const json& v) {
       p.evict = choice<KvEvict>("evict", v, {"oldest", "h2o"});
       if (p.evict == KvEvict::h2o) p.overflow = KvOverflow::window;
     },
     [](const Policy& p) { return json(name(p.evict)); }},
    {"evict_granularity", "granularity",
     [](Policy& p, const json& v) {
       p.evict_granularity = choice<KvGranularity>("granularity", v, {"page", "token"});
       if (p.evict_granularity == KvGranularity::token) p.overflow = KvOverflow::window;
     },
     [](const Policy& p) { return json(name(p.evict_granularity)); }},
    {"recent_tokens", "recent",
     [](Policy& p, const json& v) { p.recent_tokens = integer("recent", v, 0, int64_t{1} << 40); },
     [](const Policy& p) { return json(p.recent_tokens); }},
};

const PolicyKey& policy_key(const std::string& key, const json& value) {
  std::vector<std::string> known;
  for (const PolicyKey& k : kPolicyKeys) {
    if (key == k.name || key == k.alias) return k;
    known.push_back(k.alias);
    if (std::string(k.name) != k.alias) known.push_back(k.name);
  }
  fail(kWhere, key, shown(value), "unknown policy key; " + cmodel::energy::suggestion(key, known));
}

}  // namespace

void set_policy_field(Policy& p, const std::string& key, const nlohmann::json& value) {
  policy_key(key, value).set(p, value);
}

PolicyText parse_policy_text(const std::string& text, Policy base) {
  PolicyText r{base, false};
  Policy& p = r.policy;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    // A bare word is an overflow policy ("--policy spill").
    const std::string key = eq == std::string::npos ? "overflow" : item.substr(0, eq);
    const json value = eq == std::string::npos ? item : item.substr(eq + 1);
    const PolicyKey& k = policy_key(key, value);
    // the key names the overflow when it is the overflow or selects one (window, sinks, evict,
    // granularity)
    const KvOverflow before = p.overflow;
    p.overflow = KvOverflow::fail;
    k.set(p, value);
    if (std::string(k.name) == "overflow" || p.overflow != KvOverflow::fail) r.overflow_named = true;
    else p.overflow = before;
  }
  p.validate(kWhere);
  return r;
}

Policy parse_policy(const std::string& text, Policy base) { return parse_policy_text(text, base).policy; }

Policy policy_from_json(const nlohmann::json& j, Policy p) {
  if (!j.is_object()) fail(kWhere, "value", shown(j), "expected a mapping of policy fields");
  for (const auto& [key, value] : j.items()) set_policy_field(p, key, value);
  p.validate(kWhere);
  return p;
}

nlohmann::json policy_to_json(const Policy& p) {
  json j = json::object();
  for (const PolicyKey& k : kPolicyKeys) j[k.name] = k.get(p);
  return j;
}

std::string to_string(const Policy& p) {
  std::string s = std::string("overflow=") + name(p.overflow);
  s += ",page=" + (p.tokens_per_page ? std::to_string(p.tokens_per_page) : std::string("tile"));
  char frac[32];
  std::snprintf(frac, sizeof frac, "%g", p.kv_fraction);
  s += ",kv_fraction=" + (p.kv_fraction < 0 ? std::string("auto") : std::string(frac));
  s += std::string(",gqa_sharing=") + (p.gqa_sharing ? "on" : "off");
  s += ",replicas=" + std::to_string(p.replicas) + ",sequences=" + std::to_string(p.sequences);
  if (p.overflow == KvOverflow::window)
    s += ",window=" + (p.window_tokens ? std::to_string(p.window_tokens) : std::string("fit"));
  if (p.sink_tokens > 0) s += ",sinks=" + std::to_string(p.sink_tokens);
  if (p.evict != KvEvict::oldest) s += std::string(",evict=") + name(p.evict);
  if (p.evict_granularity != KvGranularity::page) s += std::string(",granularity=") + name(p.evict_granularity);
  if (p.recent_tokens > 0) s += ",recent=" + std::to_string(p.recent_tokens);
  return s;
}

}  // namespace kvcim::mapper
