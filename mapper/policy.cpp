#include "kvcim/mapper/policy.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/error.hpp"
#include "kvcim/text.hpp"

namespace kvcim::mapper {

const char* name(KvOverflow o) {
  switch (o) {
    case KvOverflow::fail: return "fail";
    case KvOverflow::spill: return "spill";
    case KvOverflow::window: return "window";
  }
  return "?";
}

const char* name(KvEvict e) { return e == KvEvict::h2o ? "h2o" : "oldest"; }

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
}

Policy parse_policy(const std::string& text, Policy p) {
  const std::vector<std::string> known = {"overflow", "page",     "kv_fraction", "gqa_sharing",
                                          "replicas", "sequences", "window", "sinks", "evict"};
  const std::string where = "--policy";
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    // A bare word is an overflow policy ("--policy spill").
    const std::string key = eq == std::string::npos ? "overflow" : item.substr(0, eq);
    const std::string value = eq == std::string::npos ? item : item.substr(eq + 1);
    if (std::find(known.begin(), known.end(), key) == known.end())
      fail(where, key, "'" + value + "'", "unknown policy key; " +
                                              cmodel::energy::suggestion(key, known));
    auto integer = [&](long lo, long hi) {
      const std::optional<int64_t> v = parse_integer(value);
      if (!v || *v < lo || *v > hi)
        fail(where, key, "'" + value + "'",
             "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return *v;
    };
    if (key == "overflow") {
      const std::vector<std::string> choices = {"fail", "spill", "window"};
      auto it = std::find(choices.begin(), choices.end(), value);
      if (it == choices.end())
        fail(where, key, "'" + value + "'", cmodel::energy::suggestion(value, choices));
      p.overflow = static_cast<KvOverflow>(it - choices.begin());
    } else if (key == "page") {
      p.tokens_per_page = value == "tile" ? 0 : static_cast<int>(integer(1, 1 << 20));
    } else if (key == "kv_fraction") {
      if (value == "auto") {
        p.kv_fraction = -1;
      } else {
        size_t used = 0;
        double v = -1;
        try {
          v = std::stod(value, &used);
        } catch (...) {
          used = 0;
        }
        if (value.empty() || used != value.size() || !(v >= 0 && v <= 1))
          fail(where, key, "'" + value + "'", "expected a fraction in [0, 1] or auto");
        p.kv_fraction = v;
      }
    } else if (key == "gqa_sharing") {
      if (value == "on" || value == "true" || value == "1") p.gqa_sharing = true;
      else if (value == "off" || value == "false" || value == "0") p.gqa_sharing = false;
      else fail(where, key, "'" + value + "'", "expected on or off");
    } else if (key == "replicas") {
      p.replicas = static_cast<int>(integer(1, 1024));
    } else if (key == "sequences") {
      p.sequences = static_cast<int>(integer(1, 65536));
    } else if (key == "window") {
      p.window_tokens = integer(1, 1L << 40);
      p.overflow = KvOverflow::window;
    } else if (key == "sinks") {
      p.sink_tokens = integer(1, 1L << 40);
      p.overflow = KvOverflow::window;
    } else if (key == "evict") {
      const std::vector<std::string> choices = {"oldest", "h2o"};
      auto it = std::find(choices.begin(), choices.end(), value);
      if (it == choices.end())
        fail(where, key, "'" + value + "'", cmodel::energy::suggestion(value, choices));
      p.evict = static_cast<KvEvict>(it - choices.begin());
      if (p.evict == KvEvict::h2o) p.overflow = KvOverflow::window;
    }
  }
  p.validate(where);
  return p;
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
  return s;
}

}  // namespace kvcim::mapper
