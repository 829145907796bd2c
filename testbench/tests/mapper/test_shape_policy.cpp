// Model shapes (presets, strings, checkpoints) and policy strings.
#include <gtest/gtest.h>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/energy/workload.hpp"
#include "error_of.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/mapper/shape.hpp"

using namespace kvcim::mapper;

using kvcim::test::error_of;

TEST(Shape, PresetsArePublicShapes) {
  const auto l2 = shape_preset("llama2-7b").config;
  EXPECT_EQ(l2.dim, 4096);
  EXPECT_EQ(l2.hidden_dim, 11008);
  EXPECT_EQ(l2.n_kv_heads, 32);
  // energy-numbers.md K1: 6.74 B parameters
  EXPECT_NEAR(static_cast<double>(l2.parameter_count()), 6.74e9, 0.01e9);
  const auto l3 = shape_preset("llama3-8b").config;
  EXPECT_EQ(l3.kv_group(), 4);
  EXPECT_NEAR(static_cast<double>(l3.parameter_count()), 8.03e9, 0.01e9);  // K2
  EXPECT_EQ(preset_names().size(), 10u);
  const std::string e = error_of([] { shape_preset("llama2-7") ; });
  EXPECT_NE(e.find("llama2-7b"), std::string::npos) << e;
}

// The published parameter counts (Hugging Face model cards / papers): each preset's shape must
// give its model's count within 0.5% (embeddings and the untied classifier counted once each).
TEST(Shape, PresetParameterCountsArePublished) {
  const std::pair<const char*, double> published[] = {
      {"llama2-7b", 6.74e9},  {"llama2-13b", 13.0e9}, {"llama2-70b", 69.0e9},
      {"llama3-8b", 8.03e9},  {"llama3-70b", 70.6e9}, {"mistral-7b", 7.24e9},
      {"tinyllama-1.1b", 1.10e9}};
  for (const auto& [name, n] : published) {
    const auto c = shape_preset(name).config;
    EXPECT_NEAR(static_cast<double>(c.parameter_count()) / n, 1.0, 0.005) << name;
    EXPECT_FALSE(c.shared_classifier) << name;
  }
  EXPECT_EQ(shape_preset("llama2-70b").config.n_kv_heads, 8);
  EXPECT_EQ(shape_preset("mistral-7b").sliding_window, 4096);
  EXPECT_EQ(shape_preset("mistral-7b").kv_context(32768), 4096);
  EXPECT_EQ(shape_preset("llama2-7b").kv_context(32768), 32768);
  const std::string e = error_of([] { shape_preset("llama2-70") ; });
  EXPECT_NE(e.find("llama2-70b"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(Shape, EmbeddedCheckpointEqualsItsPreset) {
  const auto c = shape_from_checkpoint(kvcim::cmodel::default_model_path()).config;
  const auto p = shape_preset("stories260k").config;
  EXPECT_EQ(c.dim, p.dim);
  EXPECT_EQ(c.hidden_dim, p.hidden_dim);
  EXPECT_EQ(c.n_layers, p.n_layers);
  EXPECT_EQ(c.n_heads, p.n_heads);
  EXPECT_EQ(c.n_kv_heads, p.n_kv_heads);
  EXPECT_EQ(c.vocab_size, p.vocab_size);
  EXPECT_EQ(c.seq_len, p.seq_len);
  EXPECT_EQ(c.shared_classifier, p.shared_classifier);
}

TEST(Shape, StringsParseAndRoundTrip) {
  const auto s = parse_shape("dim=4096,hidden=11008,layers=32,heads=32,kv_heads=8,vocab=32000,context=4096");
  EXPECT_EQ(s.config.n_kv_heads, 8);
  EXPECT_TRUE(s.config.shared_classifier);
  const auto d = parse_shape("dim=64,hidden=100,layers=2,heads=4,vocab=10,context=16,shared_classifier=false");
  EXPECT_EQ(d.config.n_kv_heads, 4);  // default: heads
  EXPECT_FALSE(d.config.shared_classifier);
  const auto back = parse_shape(to_string(d.config)).config;
  EXPECT_EQ(back.dim, 64);
  EXPECT_EQ(back.hidden_dim, 100);
  EXPECT_FALSE(back.shared_classifier);
}

TEST(Shape, HeadDimApartFromDimOverHeadsShapesQoAndKv) {
  // Qwen3-0.6B: 16 heads of 128 over hidden 1024, 8 KV heads
  const auto q = parse_shape("dim=1024,hidden=3072,layers=28,heads=16,kv_heads=8,vocab=151936,context=40960,head_dim=128");
  EXPECT_EQ(q.config.head_dim(), 128);
  EXPECT_EQ(q.config.q_dim(), 2048);
  EXPECT_EQ(q.config.kv_dim(), 1024);
  const auto m = kvcim::cmodel::energy::layer_matrices(q.config, 0);
  EXPECT_EQ(std::make_pair(m[0].n_in, m[0].n_out), std::make_pair(int64_t{1024}, int64_t{2048}));  // q_proj
  EXPECT_EQ(std::make_pair(m[3].n_in, m[3].n_out), std::make_pair(int64_t{2048}, int64_t{1024}));  // o_proj
  EXPECT_EQ(parse_shape(to_string(q.config)).config.head_dim(), 128);  // the text reads back
  // without head_dim, the text is as before
  EXPECT_EQ(to_string(parse_shape("dim=64,hidden=100,layers=2,heads=4,vocab=10,context=16").config).find("head_dim"),
            std::string::npos);
}

TEST(Shape, BadStringsAreNamed) {
  std::string e = error_of([] { parse_shape("dim=64,hiden=10,layers=1,heads=4,vocab=5,context=8"); });
  EXPECT_NE(e.find("did you mean 'hidden'"), std::string::npos) << e;
  e = error_of([] { parse_shape("dim=64,hidden=x,layers=1,heads=4,vocab=5,context=8"); });
  EXPECT_NE(e.find("hidden = 'x'"), std::string::npos) << e;
  e = error_of([] { parse_shape("dim=64,hidden=10,layers=1,heads=4,vocab=5"); });
  EXPECT_NE(e.find("context"), std::string::npos) << e;
  e = error_of([] { parse_shape("dim=64,hidden=10,layers=1,heads=5,vocab=5,context=8"); });
  EXPECT_NE(e.find("n_heads"), std::string::npos) << e;  // 5 does not divide 64
  e = error_of([] { parse_shape("dim=64,hidden=-3,layers=1,heads=4,vocab=5,context=8"); });
  EXPECT_NE(e.find("positive"), std::string::npos) << e;
  e = error_of([] { parse_shape("dim"); });
  EXPECT_NE(e.find("key=value"), std::string::npos) << e;
}

TEST(Policy, ParsesEveryKey) {
  const Policy p = parse_policy("overflow=spill,page=16,kv_fraction=0.25,gqa_sharing=off,replicas=2,sequences=3");
  EXPECT_EQ(p.overflow, KvOverflow::spill);
  EXPECT_EQ(p.tokens_per_page, 16);
  EXPECT_DOUBLE_EQ(p.kv_fraction, 0.25);
  EXPECT_FALSE(p.gqa_sharing);
  EXPECT_EQ(p.replicas, 2);
  EXPECT_EQ(p.sequences, 3);
  const Policy w = parse_policy("window=100");
  EXPECT_EQ(w.overflow, KvOverflow::window);
  EXPECT_EQ(w.window_tokens, 100);
  const Policy ws = parse_policy("window=256,sinks=4");
  EXPECT_EQ(ws.overflow, KvOverflow::window);
  EXPECT_EQ(ws.sink_tokens, 4);
  EXPECT_EQ(parse_policy(to_string(ws)).sink_tokens, 4);  // the printed policy reads back
  const Policy h = parse_policy("window=256,evict=h2o");
  EXPECT_EQ(h.evict, KvEvict::h2o);
  EXPECT_EQ(parse_policy(to_string(h)).evict, KvEvict::h2o);
  EXPECT_EQ(parse_policy("evict=h2o").overflow, KvOverflow::window);
  EXPECT_EQ(parse_policy("spill,evict=oldest").overflow, KvOverflow::spill);
  EXPECT_EQ(parse_policy("spill").overflow, KvOverflow::spill);
  EXPECT_LT(parse_policy("kv_fraction=auto").kv_fraction, 0);
  EXPECT_EQ(parse_policy("").overflow, KvOverflow::fail);
}

TEST(Policy, BadPoliciesAreNamed) {
  const struct {
    const char* policy;
    const char* says;
  } cases[] = {
      {"overflw=spill", "did you mean 'overflow'"},
      {"overflow=spil", "did you mean 'spill'"},
      {"kv_fraction=1.5", "kv_fraction = '1.5'"},
      {"window=64,sinks=64", "sinks = 64: fewer tokens than the window (64)"},
      {"evict=h2o,overflow=spill", "evict = h2o: only meaningful with overflow=window"},
      {"evict=h2", "did you mean 'h2o'"},
      {"sinks=4,overflow=spill", "only meaningful with overflow=window"},
      {"replicas=0", "replicas"},
      {"window=10,overflow=fail", "window"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of([&] { parse_policy(c.policy); });
    EXPECT_NE(e.find(c.says), std::string::npos) << c.policy << ": " << e;
  }
}

// One key table drives the text, the JSON (a Python dict, a YAML mapping) and the printed forms:
// the same policy comes out of each, by field name or by the text's short word.
TEST(Policy, TextJsonAndAliasesAreOneVocabulary) {
  const Policy text = parse_policy("window=256,sinks=4,page=32,kv_fraction=0.5,gqa_sharing=off,replicas=2,evict=h2o");
  const Policy by_name = policy_from_json(nlohmann::json::parse(
      R"({"window_tokens": 256, "sink_tokens": 4, "tokens_per_page": 32, "kv_fraction": 0.5,
          "gqa_sharing": false, "replicas": 2, "evict": "h2o"})"));
  const Policy by_alias = policy_from_json(nlohmann::json::parse(
      R"({"window": "256", "sinks": 4, "page": 32, "kv_fraction": "0.5", "gqa_sharing": "off",
          "replicas": 2, "evict": "h2o"})"));
  for (const Policy* p : {&by_name, &by_alias}) {
    EXPECT_EQ(policy_to_json(*p), policy_to_json(text));
    EXPECT_EQ(to_string(*p), to_string(text));
  }
  EXPECT_EQ(text.overflow, KvOverflow::window);  // window and sinks select the window policy
  // Each form reads the others back: JSON -> policy -> text -> policy -> JSON.
  for (const char* t : {"", "spill", "window=fit", "window=64,sinks=8,evict=h2o", "page=16,kv_fraction=0.25,sequences=3",
                        "window=16,sinks=4,granularity=token", "window=32,sinks=4,evict=h2o,granularity=token,recent=8"}) {
    SCOPED_TRACE(t);
    const Policy p = parse_policy(t);
    EXPECT_EQ(policy_to_json(policy_from_json(policy_to_json(p))), policy_to_json(p));
    EXPECT_EQ(policy_to_json(parse_policy(to_string(p))), policy_to_json(p));
  }
  const nlohmann::json j = policy_to_json(parse_policy("spill"));
  EXPECT_EQ(j["kv_fraction"], "auto");
  EXPECT_EQ(j["tokens_per_page"], 0);
  EXPECT_EQ(j.size(), 11u);  // every field of the struct
  // The same error from either form, naming the policy's field and not a command-line option.
  const std::string from_text = error_of([] { parse_policy("page=abc"); });
  const std::string from_json = error_of([] { policy_from_json(nlohmann::json{{"tokens_per_page", "abc"}}); });
  EXPECT_EQ(from_text, from_json);
  EXPECT_EQ(from_text.rfind("policy: page = 'abc': expected an integer", 0), 0u) << from_text;
  EXPECT_NE(error_of([] { policy_from_json(nlohmann::json{{"replicas", true}}); }).find("replicas = true"),
            std::string::npos);
  const std::string unknown = error_of([] { policy_from_json(nlohmann::json{{"page_size", 8}}); });
  EXPECT_NE(unknown.find("policy: page_size = 8: unknown policy key"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("tokens_per_page"), std::string::npos) << unknown;  // both spellings listed
  EXPECT_NE(error_of([] { policy_from_json(nlohmann::json::array()); }).find("expected a mapping"),
            std::string::npos);
}

// Text parsed once says whether it chose the overflow: by name, as a bare word, or by a key that
// selects the window; other keys (and a window of 0 tokens) leave the base's overflow.
TEST(Policy, TextSaysWhetherItNamedTheOverflow) {
  Policy spill;
  spill.overflow = KvOverflow::spill;
  struct Case {
    const char* text;
    bool named;
    KvOverflow overflow;  // on the spill base
  };
  for (const Case& c : {Case{"", false, KvOverflow::spill}, Case{"page=16,kv_fraction=0.5", false, KvOverflow::spill},
                        Case{"window=0", false, KvOverflow::spill}, Case{"evict=oldest", false, KvOverflow::spill},
                        Case{"overflow=fail", true, KvOverflow::fail}, Case{"fail,page=16", true, KvOverflow::fail},
                        Case{"spill", true, KvOverflow::spill}, Case{"window=64", true, KvOverflow::window},
                        Case{"sinks=4", true, KvOverflow::window}, Case{"evict=h2o", true, KvOverflow::window},
                        Case{"granularity=token", true, KvOverflow::window},
                        Case{"granularity=page", false, KvOverflow::spill}}) {
    SCOPED_TRACE(c.text);
    const PolicyText t = parse_policy_text(c.text, spill);
    EXPECT_EQ(t.overflow_named, c.named);
    EXPECT_EQ(t.policy.overflow, c.overflow);
    EXPECT_EQ(policy_to_json(t.policy), policy_to_json(parse_policy(c.text, spill)));
  }
}
