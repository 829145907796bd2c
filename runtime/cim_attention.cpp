#include "kvcim/runtime/cim_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kvcim/cmodel/quant/quant.hpp"
#include "kvcim/error.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;
using cim::TileEvents;

namespace {
// Events of `tile` since `before`.
TileEvents delta(const cim::AttentionTile& tile, const TileEvents& before) {
  return minus_fields(tile.events(), before);
}
constexpr int kNoExponent = std::numeric_limits<int>::min();  // a channel that was always 0

// k_i 2^-e_i rounded half away from zero (the quantiser's rule), within the signed `bits` range.
std::vector<int8_t> quantize_channels(const float* k, const std::vector<int>& e, int bits) {
  const int qmax = (1 << (bits - 1)) - 1;
  std::vector<int8_t> out(e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    const long r = e[i] == kNoExponent ? 0 : std::lround(std::ldexp(static_cast<double>(k[i]), -e[i]));
    out[i] = static_cast<int8_t>(std::clamp<long>(r, -qmax, qmax));
  }
  return out;
}
}  // namespace

CimAttention::CimAttention(const Config& config, TileFactory factory, bool k_per_channel, KvWindow window)
    : config_(config), factory_(std::move(factory)), window_(window), k_per_channel_(k_per_channel) {
  if (window_.cim_tiles < -1 || (window_.cim_tiles >= 0 && window_.tiles > 0))
    throw Error("CimAttention: cim_tiles = " + std::to_string(window_.cim_tiles) +
                ": expected >= 0 (or -1: all), and -1 with a window (spill and window exclude each other)");
  if (window_.tiles < 0 || window_.sinks < 0 || (window_.tiles > 0 && window_.sinks >= window_.tiles))
    throw Error("CimAttention: window of " + std::to_string(window_.tiles) + " tiles with " +
                std::to_string(window_.sinks) + " sink tiles: the window must keep a tile besides its sinks");
  auto probe = factory_();
  params_ = probe->params();
  if (window_.tokens > 0) {
    const auto bad = [&](const std::string& why) {
      throw Error("CimAttention: token window of " + std::to_string(window_.tokens) + " tokens (" +
                  std::to_string(window_.sink_tokens) + " sinks, " + std::to_string(window_.recent_tokens) +
                  " recent): " + why);
    };
    if (window_.tiles > 0 || window_.cim_tiles >= 0) bad("tile windows and spill exclude it");
    if (window_.sink_tokens < 0 || window_.recent_tokens < 0 ||
        window_.sink_tokens + window_.recent_tokens >= window_.tokens)
      bad("the window must keep a token besides its sinks and recent tokens");
    if (k_per_channel_)
      bad("kv.k_scale: channel re-writes a tile's tokens when a channel's exponent grows; token "
          "eviction overwrites single tokens, which needs per-token K scales (kv.k_scale: token)");
    if (!probe->can_overwrite())
      bad("this attention tile cannot overwrite a token's slot in place (the RTL tile appends at its next "
          "slot only): use the C-model tile (attention_backend = cim) or granularity=page");
  }
  if (params_.head_dim != config.head_dim())
    throw Error("attention tile: head_dim = " + std::to_string(params_.head_dim) +
                ": the model's heads have " + std::to_string(config.head_dim()) + " dimensions");
  spare_.push_back(std::move(probe));
  tiles_.resize(static_cast<size_t>(config.n_layers) * config.n_kv_heads);
  written_.assign(tiles_.size(), 0);
  drawn_.resize(tiles_.size());
  slots_.resize(tiles_.size());
  if (k_per_channel_) channel_.resize(tiles_.size());
}

void CimAttention::append(int layer, int pos, const float* k, const float* v, AttentionEvents& ev) {
  const int hd = config_.head_dim();
  for (int h = 0; h < config_.n_kv_heads; ++h) {
    const int stream = layer * config_.n_kv_heads + h;
    auto& tiles = tiles_[stream];
    if (pos != written_[stream])
      throw Error("CimAttention: layer " + std::to_string(layer) + ": position " +
                  std::to_string(pos) + " written out of order");
    ++written_[stream];
    if (window_.tokens > 0) {  // token granularity: a slot of the window's tiles, appended or overwritten
      const int slot = token_slot(stream, pos);
      cim::AttentionTile& tile = *tiles[slot / params_.tokens];
      const int row = slot % params_.tokens;
      const TileEvents before = tile.events();
      tile.set_time_ns(now_ns_);
      const quant::Pow2Vector kq = quant::quantize_pow2(k + h * hd, hd, params_.kb());
      const quant::Pow2Vector vq = quant::quantize_pow2(v + h * hd, hd, params_.vb());
      ev.kv_quant_ops += 2 * hd;
      if (row == tile.tokens()) tile.append(kq.q, vq.q, kq.exponent, vq.exponent);
      else tile.overwrite(row, kq.q, vq.q, kq.exponent, vq.exponent);
      ev.write += delta(tile, before);
      continue;
    }
    if (tiles.empty() || tiles.back()->tokens() == params_.tokens) {
      if (window_.tiles > 0 && static_cast<int>(tiles.size()) == window_.tiles) {
        // the window is full: a tile after the sinks leaves (with its channel exponents)
        const int gone = victim(stream);
        spare_.push_back(std::move(tiles[gone]));
        tiles.erase(tiles.begin() + gone);
        if (k_per_channel_) {
          auto& ex = channel_[stream].exponents;
          ex.erase(ex.begin() + gone);
        }
        if (window_.heavy_hitters) drawn_[stream].erase(drawn_[stream].begin() + gone);
      }
      add_tile(stream);
      if (window_.heavy_hitters) drawn_[stream].push_back(0.0);
    }
    cim::AttentionTile& tile = *tiles.back();
    // the write's events: refresh writes the time brings (if any), then the append's
    const TileEvents before = tile.events();
    tile.set_time_ns(now_ns_);
    const quant::Pow2Vector vq = quant::quantize_pow2(v + h * hd, hd, params_.vb());
    if (!k_per_channel_) {
      // per token and KV head, power-of-two scales
      const quant::Pow2Vector kq = quant::quantize_pow2(k + h * hd, hd, params_.kb());
      ev.kv_quant_ops += 2 * hd;
      tile.append(kq.q, vq.q, kq.exponent, vq.exponent);
      ev.write += delta(tile, before);
      continue;
    }
    // Per channel: channel i of the tile holds k_i 2^-e_i, e_i the smallest exponent that fits
    // every token of the tile so far (ek = 0; the query is scaled by 2^e_i instead). A token that
    // needs a larger e_i re-quantises and re-writes the tile's tokens (counted as writes).
    ChannelState& cs = channel_[layer * config_.n_kv_heads + h];
    if (tile.tokens() == 0) {
      cs.exponents.emplace_back(hd, kNoExponent);
      cs.k.clear();
      cs.v.clear();
    }
    std::vector<int>& e = cs.exponents.back();
    bool grew = false;
    for (int i = 0; i < hd; ++i) {
      const float a = std::fabs(k[h * hd + i]);
      if (a == 0.0f) continue;
      const int need = quant::pow2_exponent(a, params_.kb());
      if (need > e[i]) {
        grew = grew || e[i] != kNoExponent;  // an always-0 channel holds codes 0 at any e
        e[i] = need;
      }
    }
    cs.k.insert(cs.k.end(), k + h * hd, k + (h + 1) * hd);
    cs.v.insert(cs.v.end(), v + h * hd, v + (h + 1) * hd);
    const int held = tile.tokens();
    if (grew && held > 0) {
      tile.reset();
      tile.set_time_ns(now_ns_);  // the re-written tokens are written now (reset restarts the clock)
    }
    const int first = (grew && held > 0) ? 0 : held;
    const int n_tok = static_cast<int>(cs.k.size()) / hd;
    for (int t = first; t < n_tok; ++t) {
      const std::vector<int8_t> kq = quantize_channels(cs.k.data() + t * hd, e, params_.kb());
      const quant::Pow2Vector vt = t == n_tok - 1 ? vq : quant::quantize_pow2(cs.v.data() + t * hd, hd, params_.vb());
      tile.append(kq, vt.q, 0, vt.exponent);
      ev.kv_quant_ops += 2 * hd;
    }
    ev.write += delta(tile, before);
  }
}

void CimAttention::attend(int layer, int head, const float* q, float* out, AttentionEvents& ev) {
  const int hd = config_.head_dim();
  const int kv_head = head / config_.kv_group();  // the GQA group's shared KV head
  auto& tiles = tiles_[layer * config_.n_kv_heads + kv_head];
  if (tiles.empty()) throw Error("CimAttention: attend before any K/V was written");
  // per query, a dynamic scale, turned into the tile's (qmul, qexp) code once
  const quant::QuantizedVector qq = quant::quantize_activation(q, hd, params_.kv_bits);
  ev.q_quant_ops += hd;
  const cim::QueryScale scale = cim::query_scale(qq.scale, hd);
  std::vector<cim::TileResult> parts;
  parts.reserve(tiles.size());
  std::vector<float> qs(hd);
  for (size_t j = 0; j < tiles.size(); ++j) {
    auto& tile = tiles[j];
    const TileEvents before = tile->events();
    tile->set_time_ns(now_ns_);  // refresh writes (if any) go with this query
    if (!k_per_channel_) {
      parts.push_back(tile->query(qq.q, scale));
    } else {
      // q_i 2^e_i for this tile's channel exponents, quantised with its own dynamic scale: the
      // tile's Y_t stays the real logit, so combine_tiles joins tiles of different exponents.
      const std::vector<int>& e = channel_[layer * config_.n_kv_heads + kv_head].exponents.at(j);
      for (int i = 0; i < hd; ++i) qs[i] = std::ldexp(q[i], e[i] == kNoExponent ? 0 : e[i]);
      const quant::QuantizedVector qt = quant::quantize_activation(qs.data(), hd, params_.kv_bits);
      ev.q_quant_ops += 2 * hd;  // the scaling and the quantisation
      parts.push_back(qt.scale > 0 ? tile->query(qt.q, cim::query_scale(qt.scale, hd))
                                   : tile->query(qt.q, scale));
    }
    // spilled tiles (older than the newest cim_tiles) are the digital engine's work
    const int stream = layer * config_.n_kv_heads + kv_head;
    const size_t in_cim = static_cast<size_t>(window_.cim_tiles + (stream < window_.cim_extra_streams ? 1 : 0));
    const bool spilled = window_.cim_tiles >= 0 && j + in_cim < tiles.size();
    (spilled ? ev.offchip_query : ev.query) += delta(*tile, before);
  }
  const std::vector<double> o = cim::combine_tiles(parts, params_);
  if (window_.heavy_hitters && window_.tokens == 0) {
    std::vector<double>& drawn = drawn_[layer * config_.n_kv_heads + kv_head];
    const std::vector<double> share = cim::tile_shares(parts, params_);
    for (size_t j = 0; j < share.size(); ++j) drawn[j] += share[j];
  }
  if (window_.heavy_hitters && window_.tokens > 0) {
    // each token's share: its tile's share times its part of the tile's sum
    TokenSlots& st = slots_[layer * config_.n_kv_heads + kv_head];
    const std::vector<double> share = cim::tile_shares(parts, params_);
    for (size_t j = 0; j < tiles.size(); ++j) {
      const std::span<const uint32_t> e = tiles[j]->last_weights();
      if (static_cast<int>(e.size()) != tiles[j]->tokens())
        throw Error("CimAttention: heavy hitters need the tile's per-token weights, which this tile does not report");
      for (size_t r = 0; r < e.size(); ++r)
        st.score[j * params_.tokens + r] += share[j] * static_cast<double>(e[r]) / static_cast<double>(parts[j].sum);
    }
  }
  if (parts.size() > 1) ev.combine_ops += static_cast<int64_t>(parts.size()) * (hd + 2);
  for (int i = 0; i < hd; ++i) out[i] = static_cast<float>(o[i]);
}

int CimAttention::victim(int stream) const {
  if (!window_.heavy_hitters) return window_.sinks;
  // the least-drawn tile among [sinks, newest): the newest full tile stays, as H2O keeps its
  // recent tokens; with no choice (window = sinks + 1) the oldest after the sinks leaves
  const std::vector<double>& drawn = drawn_[stream];
  const int last = static_cast<int>(drawn.size()) - 1;
  int best = window_.sinks;
  for (int j = window_.sinks + 1; j < last; ++j)
    if (drawn[j] < drawn[best]) best = j;
  return best;
}

void CimAttention::add_tile(int stream) {
  auto& tiles = tiles_[stream];
  if (!spare_.empty()) {
    tiles.push_back(std::move(spare_.back()));
    spare_.pop_back();
  } else {
    tiles.push_back(factory_());
  }
  tiles.back()->reset();
}

int CimAttention::token_slot(int stream, int pos) {
  TokenSlots& st = slots_[stream];
  const int held = static_cast<int>(st.pos.size());
  if (held == window_.tokens) {  // full: a token leaves, the new one takes its slot
    const int slot = token_victim(stream, pos);
    st.pos[slot] = pos;
    st.score[slot] = 0.0;
    return slot;
  }
  if (held % params_.tokens == 0) add_tile(stream);  // the next slot begins a tile
  st.pos.push_back(pos);
  st.score.push_back(0.0);
  return held;
}

int CimAttention::token_victim(int stream, int pos) const {
  // candidates: not a sink and, under H2O, older than the newest recent_tokens (the new token at
  // `pos` is one of them); the oldest candidate, or the least-drawn one (ties: the oldest).
  // sinks + recent < tokens leaves at least one candidate.
  const TokenSlots& st = slots_[stream];
  const int newest = window_.heavy_hitters ? pos - window_.recent_tokens + 1 : pos;
  int best = -1;
  for (int j = 0; j < static_cast<int>(st.pos.size()); ++j) {
    if (st.pos[j] < window_.sink_tokens || st.pos[j] >= newest) continue;
    bool better = best < 0;
    if (!better && window_.heavy_hitters && st.score[j] != st.score[best]) better = st.score[j] < st.score[best];
    else if (!better) better = st.pos[j] < st.pos[best];
    if (better) best = j;
  }
  return best;
}

void CimAttention::reset() {
  now_ns_ = 0;
  for (ChannelState& c : channel_) c = ChannelState{};
  std::fill(written_.begin(), written_.end(), 0);
  for (auto& d : drawn_) d.clear();
  for (TokenSlots& t : slots_) t = TokenSlots{};
  for (auto& list : tiles_) {
    for (auto& t : list) spare_.push_back(std::move(t));
    list.clear();
  }
}

int CimAttention::tiles_in_use() const {
  int n = 0;
  for (const auto& list : tiles_) n += static_cast<int>(list.size());
  return n;
}

}  // namespace kvcim::runtime
