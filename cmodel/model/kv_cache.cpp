#include "kvcim/cmodel/kv_cache.hpp"

#include <cstdint>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "kvcim/error.hpp"

namespace kvcim::cmodel {

KvCache::KvCache(const Config& config) : config_(config) {
  head_dim_ = config.head_dim();
  const int64_t n = int64_t(config.n_layers) * config.n_kv_heads * config.seq_len * head_dim_;
  keys_.reset(new float[n]);  // default-initialised: no page is touched here
  values_.reset(new float[n]);
  lengths_.assign(config.n_layers, 0);
}

void KvCache::write(int layer, int pos, const float* k, const float* v) {
  if (pos != lengths_.at(layer))
    throw Error("KvCache: layer " + std::to_string(layer) + ": position " + std::to_string(pos) +
                " written out of order (next position is " + std::to_string(lengths_[layer]) + ")");
  if (pos >= config_.seq_len)
    throw Error("KvCache: position " + std::to_string(pos) + " is beyond the context of " +
                std::to_string(config_.seq_len) + " tokens");
  const int hd = config_.head_dim();
  for (int h = 0; h < config_.n_kv_heads; ++h) {
    std::copy(k + h * hd, k + (h + 1) * hd, keys_.get() + offset(layer, h, pos));
    std::copy(v + h * hd, v + (h + 1) * hd, values_.get() + offset(layer, h, pos));
  }
  ++lengths_[layer];
}

void KvCache::reset() { std::fill(lengths_.begin(), lengths_.end(), 0); }

void KvCache::release() {
  reset();
#if defined(__linux__)
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto bytes = static_cast<uintptr_t>(config_.n_layers) * config_.n_kv_heads * config_.seq_len * head_dim_ * sizeof(float);
  for (float* p : {keys_.get(), values_.get()}) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(p), end = begin + bytes;
    const uintptr_t lo = (begin + page - 1) / page * page, hi = end / page * page;
    // private anonymous memory: the pages come back zero-filled; an error (a hint) keeps them
    if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
  }
#endif
}

void KvCache::copy_from(const KvCache& other) {
  if (other.config_.n_layers != config_.n_layers || other.config_.n_kv_heads != config_.n_kv_heads ||
      other.config_.seq_len != config_.seq_len || other.head_dim_ != head_dim_)
    throw Error("KvCache: copy_from a cache of another shape");
  for (int l = 0; l < config_.n_layers; ++l)
    for (int h = 0; h < config_.n_kv_heads; ++h) {
      const int64_t at = offset(l, h, 0), n = int64_t(other.lengths_[l]) * head_dim_;
      std::copy(other.keys_.get() + at, other.keys_.get() + at + n, keys_.get() + at);
      std::copy(other.values_.get() + at, other.values_.get() + at + n, values_.get() + at);
    }
  lengths_ = other.lengths_;
}

long long KvCache::bytes_per_token(const Config& c, int bytes_per_element) {
  return 2LL * c.n_layers * c.kv_dim() * bytes_per_element;
}

}  // namespace kvcim::cmodel
