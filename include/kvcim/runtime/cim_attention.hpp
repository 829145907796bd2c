// The KV cache as CIM attention tiles: per layer and KV head, a list of tiles (each holding up to
// tokens_per_tile tokens) filled as the sequence grows. K (k_bits) and V (v_bits) are quantised per
// token and KV head with power-of-two scales when written (K optionally per channel); the query is quantised per query with a dynamic scale;
// every query head of a GQA group queries the same tiles (one copy of K and V serves the group).
// More tokens than one tile holds: each tile answers, combine_tiles() joins them.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/cmodel/config.hpp"

namespace kvcim::runtime {

using cmodel::cim::TileFactory;

// A sliding window over whole tiles (the mapper's overflow=window with page = tile): a stream
// keeps at most `tiles` tiles; when a new one is needed the oldest tile after the first `sinks`
// (StreamingLLM's attention sinks) is dropped. tiles = 0: every tile is kept. heavy_hitters
// (H2O per tile): the tile dropped is instead the one, among those after the sinks and before the
// newest, with the least attention accumulated so far (the sum over queries of its share,
// cim::tile_shares); ties go to the oldest.
// cim_tiles (the mapper's overflow=spill): only a stream's newest cim_tiles tiles are in CIM; the
// older ones have moved off-chip and the digital engine attends over them on the same integer
// codes (so the results are those of full attention), their query events left to the mapper's
// periphery ledger to price (off-chip reads, conventional attention). -1: every tile is in CIM.
// As the mapper shares the slots, the first cim_extra_streams streams hold one tile more.
// Token granularity (tokens > 0; the mapper's granularity=token): a stream keeps exactly `tokens`
// tokens in ceil(tokens / tokens_per_tile) tiles, filled slot by slot; once they are full every
// new token overwrites one token's slot in place (AttentionTile::overwrite, its cell writes counted
// as an append's). The first sink_tokens tokens are never overwritten; the token overwritten is
// the oldest other one, or with heavy_hitters (H2O per token) the one with the least attention
// accumulated so far (the sum over queries of its share of the attention) among those older than
// the newest recent_tokens, ties to the oldest. K is written after RoPE, so a kept token keeps its
// original position (no re-positioning).
struct KvWindow {
  int tiles = 0;
  int sinks = 0;
  bool heavy_hitters = false;
  int cim_tiles = -1;
  int cim_extra_streams = 0;  // the first streams (layer-major, then KV head) hold one tile more
  int tokens = 0;             // token granularity: tokens kept per stream (0: whole tiles)
  int sink_tokens = 0;
  int recent_tokens = 0;
  bool operator==(const KvWindow&) const = default;
};

// Events of one attention step, split by operation.
#define KVCIM_ATTENTION_EVENTS(X)                                                               \
  X(cmodel::cim::TileEvents, write, "appends (K column group + V row cell writes)")               \
  X(cmodel::cim::TileEvents, query, "queries (scores in the K macro, softmax, V macro)")          \
  X(cmodel::cim::TileEvents, offchip_query, "queries over spilled tiles (digital engine, not CIM)") \
  X(int64_t, q_quant_ops, "query quantisation, one per element")                                  \
  X(int64_t, kv_quant_ops, "K/V quantisation, one per element written")                           \
  X(int64_t, combine_ops, "float multiply-adds joining tiles (0 for one tile)")
struct AttentionEvents {
  KVCIM_FIELDS(AttentionEvents, KVCIM_ATTENTION_EVENTS)
};

class CimAttention {
 public:
  // k_per_channel: K scaled per channel of each tile (kv.k_scale: channel), see cim_attention.cpp.
  CimAttention(const cmodel::Config& config, TileFactory factory, bool k_per_channel = false,
               KvWindow window = {});
  // Stores position `pos` of `layer` (k, v: [kv_dim] floats after RoPE).
  void append(int layer, int pos, const float* k, const float* v, AttentionEvents& ev);
  // Attention of query head `head` over every position `layer` holds (all of them, or the
  // window's): out [head_dim].
  void attend(int layer, int head, const float* q, float* out, AttentionEvents& ev);
  // The time now (ns since the sequence began), passed to every tile this appends to or queries
  // (cells that lose charge: the analog tile's retention; its refresh writes are counted with the
  // append or query that brings them).
  void set_time_ns(double ns) { now_ns_ = ns; }
  void reset();
  int tiles_in_use() const;
  // Attention each tile of the stream (layer, kv_head) has drawn so far, in tile order (only
  // kept with heavy_hitters; empty otherwise).
  const std::vector<double>& drawn(int layer, int kv_head) const {
    return drawn_.at(static_cast<size_t>(layer) * config_.n_kv_heads + kv_head);
  }
  // Token granularity: the position held by each slot of the stream (slot s: tile s / T, row
  // s % T), and with heavy_hitters the attention each slot's token has drawn so far.
  const std::vector<int>& slot_positions(int layer, int kv_head) const {
    return slots_.at(static_cast<size_t>(layer) * config_.n_kv_heads + kv_head).pos;
  }
  const std::vector<double>& slot_scores(int layer, int kv_head) const {
    return slots_.at(static_cast<size_t>(layer) * config_.n_kv_heads + kv_head).score;
  }
  const cmodel::cim::TileParams& params() const { return params_; }

 private:
  cmodel::Config config_;
  TileFactory factory_;
  cmodel::cim::TileParams params_;
  KvWindow window_;
  double now_ns_ = 0;
  // [layer * n_kv_heads + kv_head] -> tiles in order of position (the window's, if any)
  std::vector<std::vector<std::unique_ptr<cmodel::cim::AttentionTile>>> tiles_;
  std::vector<int> written_;  // [layer * n_kv_heads + kv_head] -> positions appended so far
  // heavy_hitters: per stream, per tile held, the attention it has drawn (sum of its shares)
  std::vector<std::vector<double>> drawn_;
  int victim(int stream) const;  // the tile a full window drops
  void add_tile(int stream);     // an empty tile (a spare one, or a new one) after the stream's last
  struct TokenSlots {
    std::vector<int> pos;       // [slot] position held
    std::vector<double> score;  // [slot] attention drawn (heavy_hitters)
  };
  std::vector<TokenSlots> slots_;  // [stream], token granularity
  // The slot position `pos` of `stream` is written to (a new tile taken when one is needed).
  int token_slot(int stream, int pos);
  int token_victim(int stream, int pos) const;
  std::vector<std::unique_ptr<cmodel::cim::AttentionTile>> spare_;  // emptied tiles for reuse
  // Per-channel K: per stream, each tile's channel exponents, and the float K and V of the tokens
  // in the stream's newest tile (re-quantised and re-written when an exponent grows).
  bool k_per_channel_ = false;
  struct ChannelState {
    std::vector<std::vector<int>> exponents;  // [tile][head_dim]
    std::vector<float> k, v;                  // newest tile's tokens, [token][head_dim]
  };
  std::vector<ChannelState> channel_;         // [layer * n_kv_heads + kv_head]
};

}  // namespace kvcim::runtime
