#include "kvcim/runtime/explain.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/error.hpp"
#include "kvcim/cmodel/vector_max.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;
using nlohmann::json;

// ---- counting backend and the no-cache mode --------------------------------------------------

CountingBackend::CountingBackend(const Config& config, const Weights& weights)
    : config_(config), reference_(config, weights),
      attention_(static_cast<size_t>(config.n_layers) * config.n_heads) {}

void CountingBackend::linear(int layer, MatrixKind kind, const float* x, float* y) {
  reference_.linear(layer, kind, x, y);
  int64_t rows = 0, cols = 0;
  switch (kind) {
    case MatrixKind::wq: rows = config_.q_dim(), cols = config_.dim; break;
    case MatrixKind::wk:
    case MatrixKind::wv: rows = config_.kv_dim(), cols = config_.dim; break;
    case MatrixKind::wo: rows = config_.dim, cols = config_.q_dim(); break;
    case MatrixKind::w1:
    case MatrixKind::w3: rows = config_.hidden_dim, cols = config_.dim; break;
    case MatrixKind::w2: rows = config_.dim, cols = config_.hidden_dim; break;
    case MatrixKind::classifier: rows = config_.vocab_size, cols = config_.dim; break;
  }
  linear_macs_ += rows * cols;
}

void CountingBackend::write_kv(int layer, int pos, const float* k, const float* v) {
  reference_.write_kv(layer, pos, k, v);
}

void CountingBackend::attend(int layer, int head, int pos, const float* q, float* out) {
  reference_.attend(layer, head, pos, q, out);
  const int attended = config_.sliding_window > 0 ? std::min(pos + 1, config_.sliding_window) : pos + 1;
  attention_macs_ += 2LL * attended * config_.head_dim();  // q.k_t and p_t v_t
  attention_[static_cast<size_t>(layer) * config_.n_heads + head] = reference_.last_attention();
}

const std::vector<float>& CountingBackend::attention(int layer, int head) const {
  return attention_.at(static_cast<size_t>(layer) * config_.n_heads + head);
}

Vector forward_without_cache(const Config& c, const Weights& w, const std::vector<int>& tokens,
                             int64_t& macs) {
  // a fresh cache every step: K and V of positions 0..n-2 are recomputed, never reused
  CountingBackend be(c, w);
  RunState s(c);
  for (size_t pos = 0; pos < tokens.size(); ++pos) forward(c, w, s, be, tokens[pos], static_cast<int>(pos));
  macs += be.macs();
  return s.logits;
}

// ---- helpers ---------------------------------------------------------------------------------

std::string display_piece(const Tokenizer& tok, int id) {
  const std::string& p = tok.piece(id);
  unsigned int byte = 0;
  if (p.size() == 6 && std::sscanf(p.c_str(), "<0x%02X>", &byte) == 1) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", byte);
    return buf;
  }
  // control characters escaped, so a piece always prints on one line
  std::string out;
  for (unsigned char ch : p) {
    if (ch == '\n') out += "\\n";
    else if (ch == '\t') out += "\\t";
    else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", ch);
      out += buf;
    } else out += static_cast<char>(ch);
  }
  return out;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

json top_candidates(const Vector& logits, const Tokenizer& tok, int k) {
  std::vector<float> p(logits.data(), logits.data() + logits.size());
  softmax(p.data(), static_cast<int>(p.size()));
  std::vector<int> idx(p.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  json out = json::array();
  for (int i = 0; i < k; ++i)
    out.push_back({{"id", idx[i]}, {"piece", display_piece(tok, idx[i])}, {"probability", p[idx[i]]}});
  return out;
}

json nearest_tokens(MatrixRef emb, int id, const Tokenizer& tok, int k) {
  const Vector v = emb.row(id);
  const double nv = v.norm();
  std::vector<std::pair<double, int>> sims;
  for (int t = 0; t < emb.rows(); ++t) {
    if (t == id) continue;
    const double nt = emb.row(t).norm();
    sims.push_back({nt > 0 && nv > 0 ? emb.row(t).dot(v) / (nt * nv) : 0.0, t});
  }
  std::partial_sort(sims.begin(), sims.begin() + k, sims.end(),
                    [](auto& a, auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  json out = json::array();
  for (int i = 0; i < k; ++i)
    out.push_back({{"id", sims[i].second}, {"piece", display_piece(tok, sims[i].second)}, {"cosine", sims[i].first}});
  return out;
}

// Energy of a ledger split into moving data (buffers, SRAM, off-chip, cell writes) and computing
// (arrays, converters, digital units), in pJ.
json split_energy(const energy::Ledger& l, const energy::Costs& costs) {
  const energy::Breakdown b = l.cost(costs);
  energy::Aj moving = 0, computing = 0;
  for (energy::Component comp : energy::all_components()) {
    const energy::Aj e = b.component_energy_aj[static_cast<int>(comp)];
    if (comp == energy::Component::buffer || comp == energy::Component::weight_sram ||
        comp == energy::Component::kv_sram || comp == energy::Component::offchip ||
        comp == energy::Component::interconnect || comp == energy::Component::cell_write)
      moving += e;
    else
      computing += e;
  }
  return {{"moving_pj", moving * 1e-6}, {"computing_pj", computing * 1e-6}, {"total_pj", b.energy_aj * 1e-6}};
}

// Bits moved per step by what they carry: weights (the matrix ops) and KV (attention ops).
std::pair<int64_t, int64_t> bits_moved(const energy::Ledger& l) {
  using energy::EventKind;
  using energy::Op;
  int64_t weights = 0, kv = 0;
  for (Op op : energy::all_ops()) {
    int64_t bits = 0;
    for (EventKind k : {EventKind::sram_bit, EventKind::dram_bit, EventKind::hbm_bit}) bits += l.count(op, k);
    if (op == Op::attn_scores || op == Op::attn_weighted_sum || op == Op::kv_write) kv += bits;
    else if (op != Op::softmax && op != Op::other) weights += bits;
  }
  return {weights, kv};
}

}  // namespace

// ---- explain ---------------------------------------------------------------------------------

json explain(const Checkpoint& ck, const Tokenizer& tok, const ExplainOptions& o, const ExplainEnergy& en) {
  const Config& c = ck.config;
  const Weights& w = ck.weights;
  const std::vector<int> prompt = tok.encode_prompt(o.prompt);
  if (o.steps <= 0) fail("explain", "steps", std::to_string(o.steps), "expected a positive number");
  if (o.steps > c.seq_len)
    fail("explain", "steps", std::to_string(o.steps), "exceeds the model's context of " + std::to_string(c.seq_len));
  if (static_cast<int>(prompt.size()) > o.steps)
    fail("explain", "prompt tokens", std::to_string(prompt.size()), "longer than steps = " + std::to_string(o.steps));
  json out;
  out["model"] = {{"path", ck.path}, {"dim", c.dim}, {"hidden_dim", c.hidden_dim}, {"n_layers", c.n_layers},
                  {"n_heads", c.n_heads}, {"n_kv_heads", c.n_kv_heads}, {"vocab_size", c.vocab_size},
                  {"seq_len", c.seq_len}};
  out["prompt"] = o.prompt;

  // 2. tokens
  json pieces = json::array();
  for (int id : prompt) pieces.push_back({{"id", id}, {"piece", display_piece(tok, id)}});
  out["tokens"] = pieces;

  // 3. vectors
  json vectors = json::array();
  for (size_t i = 1; i < prompt.size() && static_cast<int>(vectors.size()) < o.vectors; ++i) {
    const int id = prompt[i];
    vectors.push_back({{"id", id}, {"piece", display_piece(tok, id)}, {"size", c.dim},
                       {"norm", w.token_embedding.row(id).norm()},
                       {"nearest", nearest_tokens(w.token_embedding, id, tok, o.neighbours)}});
  }
  out["vectors"] = vectors;

  // 1. next-token prediction (greedy), with the cache; 5. the same without it
  CountingBackend cached(c, w);
  RunState s(c);
  std::vector<int> fed{prompt[0]};
  json predictions = json::array(), per_step = json::array();
  int token = prompt[0];
  std::string text;
  for (int pos = 0; pos < o.steps; ++pos) {
    const int64_t macs_before = cached.macs();
    auto t0 = std::chrono::steady_clock::now();
    const Vector& logits = forward(c, w, s, cached, token, pos);
    const double t_cached = seconds_since(t0);
    int64_t macs_nocache = 0;
    t0 = std::chrono::steady_clock::now();
    const Vector nocache = forward_without_cache(c, w, fed, macs_nocache);
    const double t_nocache = seconds_since(t0);
    const double diff = max_abs(nocache - logits);
    const bool in_prompt = pos + 1 < static_cast<int>(prompt.size());
    const int next = in_prompt ? prompt[pos + 1] : argmax(logits.data(), c.vocab_size);
    if (!in_prompt)
      predictions.push_back({{"position", pos}, {"text_so_far", text},
                             {"candidates", top_candidates(logits, tok, o.top_k)}, {"chosen", next},
                             {"chosen_piece", display_piece(tok, next)}});
    per_step.push_back({{"position", pos}, {"macs_cached", cached.macs() - macs_before},
                        {"macs_without_cache", macs_nocache}, {"seconds_cached", t_cached},
                        {"seconds_without_cache", t_nocache}, {"max_logit_difference", diff}});
    if (pos + 1 < o.steps) {
      if (tok.ends_text(next)) break;
      text += tok.printable(token, next);
      token = next;
      fed.push_back(next);
    }
  }
  out["text"] = text;
  out["predictions"] = predictions;

  // 4. K/V notes of the last position: per layer, the earlier tokens weighted most
  json notes = json::array();
  const int last = static_cast<int>(fed.size()) - 1;
  for (int l = 0; l < c.n_layers; ++l) {
    std::vector<double> avg(last + 1, 0.0);
    for (int h = 0; h < c.n_heads; ++h) {
      const std::vector<float>& a = cached.attention(l, h);
      for (int t = 0; t <= last && t < static_cast<int>(a.size()); ++t) avg[t] += a[t] / c.n_heads;
    }
    std::vector<int> idx(last + 1);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return avg[a] > avg[b]; });
    json top = json::array();
    for (int i = 0; i < std::min(3, last + 1); ++i)
      top.push_back({{"position", idx[i]}, {"id", fed[idx[i]]}, {"piece", display_piece(tok, fed[idx[i]])},
                     {"weight", avg[idx[i]]}});
    notes.push_back({{"layer", l}, {"weights", avg}, {"top", top}});
  }
  out["kv_notes"] = {{"position", last}, {"token", display_piece(tok, fed[last])}, {"layers", notes}};

  // 6. what it costs: bytes, and energy per step moving vs computing
  const int64_t kv_bytes_fp32 = KvCache::bytes_per_token(c, 4);
  json costs = json::array();
  for (const auto& step : per_step) {
    const int pos = step["position"];
    json row = {{"position", pos}, {"kv_cache_bytes_fp32", kv_bytes_fp32 * (pos + 1)}};
    if (en.conventional_step_ledger) {
      const energy::Ledger conv = en.conventional_step_ledger(pos);
      energy::Ledger conv_nocache(c.n_layers);
      for (int t = 0; t <= pos; ++t) conv_nocache += en.conventional_step_ledger(t);
      const auto [wbits, kvbits] = bits_moved(conv);
      row["conventional"] = split_energy(conv, en.conventional_costs);
      row["conventional_without_cache"] = split_energy(conv_nocache, en.conventional_costs);
      row["weight_bytes_moved"] = wbits / 8;
      row["kv_bytes_moved"] = kvbits / 8;
      row["macs"] = step["macs_cached"];
    }
    if (en.cim_step_ledger) {
      const energy::Ledger cim = en.cim_step_ledger(pos);
      energy::Ledger cim_nocache(c.n_layers);
      for (int t = 0; t <= pos; ++t) cim_nocache += en.cim_step_ledger(t);
      row["cim"] = split_energy(cim, en.cim_costs);
      row["cim_without_cache"] = split_energy(cim_nocache, en.cim_costs);
    }
    costs.push_back(row);
  }
  out["kv_cache"] = {{"bytes_per_token_fp32", kv_bytes_fp32}, {"bytes_per_token_fp16", KvCache::bytes_per_token(c, 2)},
                     {"steps", per_step}};
  out["costs"] = {{"hardware", en.hardware}, {"steps", costs}};
  return out;
}

}  // namespace kvcim::runtime
