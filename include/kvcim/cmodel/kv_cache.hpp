// The float KV cache of the reference model: K and V per layer and KV head, one row per position.
// Append-only: position p of a layer is written exactly once, after positions 0..p-1, and never
// recomputed; reset() starts a new sequence.
#pragma once
#include <memory>
#include <vector>

#include "kvcim/cmodel/weights.hpp"

namespace kvcim::cmodel {

class KvCache {
 public:
  explicit KvCache(const Config& config);

  // Stores one position's K and V for every KV head of `layer` (k, v: [kv_dim]).
  void write(int layer, int pos, const float* k, const float* v);
  // Row of position `pos` for one layer and KV head: [head_dim] floats.
  const float* key(int layer, int kv_head, int pos) const {
    return keys_.get() + offset(layer, kv_head, pos);
  }
  const float* value(int layer, int kv_head, int pos) const {
    return values_.get() + offset(layer, kv_head, pos);
  }
  // Positions written so far in `layer`.
  int length(int layer) const { return lengths_[layer]; }
  void reset();
  // reset() that also gives the pages written back to the system (whole pages only; they read
  // as zeros when written again): a cache kept for another sequence holds only what that one
  // writes, not the longest sequence's positions before it.
  void release();
  // Takes the positions `other` (of the same shape) has written, and its lengths.
  void copy_from(const KvCache& other);
  // Bytes of K and V held for `tokens` positions at float32 (what a conventional engine reads).
  static long long bytes_per_token(const Config& config, int bytes_per_element);

 private:
  Config config_;
  // [layer][kv_head][seq_len][head_dim], allocated but not initialised: positions are read only
  // after they are written, and pages never written are never made resident (a short sequence
  // of a long-context model costs only the memory it uses).
  std::unique_ptr<float[]> keys_, values_;
  int64_t offset(int layer, int kv_head, int pos) const {
    return ((int64_t(layer) * config_.n_kv_heads + kv_head) * config_.seq_len + pos) * head_dim_;
  }
  int head_dim_ = 0;
  std::vector<int> lengths_;
};

}  // namespace kvcim::cmodel
