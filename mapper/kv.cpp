// The KV cache: layout of pages in attention tiles, the page allocator (block tables) and the
// closed form of its lock-step behaviour (see placement.hpp and docs/mapper.md).
#include <algorithm>

#include "kvcim/enum_names.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/placement.hpp"

namespace kvcim::mapper {

constexpr std::array kWhereNames{"cim", "offchip", "evicted"};
static_assert(kWhereNames.size() == enum_count(Where::evicted));
const char* name(Where w) { return enum_name(w, kWhereNames); }

KvLayout kv_layout(const cmodel::Config& c, const HardwareSpec& hw, const Policy& p,
                   int64_t kv_macros) {
  KvLayout k;
  k.tile = hw.tile(c.head_dim());
  k.tile.validate(hw.source + ": kv");
  const int T = k.tile.tokens;
  k.tokens_per_page = p.tokens_per_page > 0 ? p.tokens_per_page : T;
  if (k.tokens_per_page > T || T % k.tokens_per_page != 0)
    fail("policy", "page", std::to_string(k.tokens_per_page),
         "must divide kv.tokens_per_tile = " + std::to_string(T) + " (a tile holds whole pages)");
  k.pages_per_tile = T / k.tokens_per_page;
  // K and V at their own widths (kv.k_bits, kv.v_bits): narrower KV fits more tokens per macro
  k.tile_cells = int64_t{k.tile.head_dim} * T * (k.tile.kb() + k.tile.vb());
  if (kv_macros < 0) fail("placement", "kv_macros", std::to_string(kv_macros), "expected >= 0");
  k.macros = kv_macros;
  // macros x cells can exceed int64 for absurd specs: computed wide, bounded
  const __int128 tiles = static_cast<__int128>(kv_macros) * hw.macro_cells() / k.tile_cells;
  if (tiles > (static_cast<__int128>(1) << 40))
    fail(hw.source, "organization.macros", std::to_string(hw.organization.macros),
         "more than 2^40 KV tiles: too large to map");
  k.tiles = static_cast<int64_t>(tiles);
  k.layers = c.n_layers;
  k.stored_heads = p.gqa_sharing ? c.n_kv_heads : c.n_heads;
  k.query_heads_per_stream = p.gqa_sharing ? c.kv_group() : 1;
  k.sequences = p.sequences;
  return k;
}

int64_t KvLayout::pages_per_stream() const { return slots() / streams(); }
int64_t KvLayout::streams_with_extra_page() const {
  return slots() - pages_per_stream() * streams();
}

int64_t KvLayout::window_pages(const Policy& p) const {
  if (p.overflow != KvOverflow::window) return 0;
  if (p.window_tokens > 0) return (p.window_tokens + tokens_per_page - 1) / tokens_per_page;
  return pages_per_stream();
}

int64_t KvLayout::sink_pages(const Policy& p) const {
  if (p.overflow != KvOverflow::window) return 0;
  return (p.sink_tokens + tokens_per_page - 1) / tokens_per_page;
}

int64_t KvLayout::kept_tokens(const Policy& p) const {
  if (!p.token_window()) return 0;
  return p.window_tokens > 0 ? p.window_tokens : window_pages(p) * tokens_per_page;
}

int64_t KvLayout::recent_tokens(const Policy& p) const {
  if (!p.token_window() || p.evict != KvEvict::h2o) return 0;
  return p.recent_tokens > 0 ? p.recent_tokens : (kept_tokens(p) - p.sink_tokens) / 2;
}

namespace {
// Token granularity: every stream holds the window's pages at once (its tokens are overwritten
// in place, never dropped page by page), with a slot besides its sink tokens and, under H2O, its
// recent ones. One line before any work, naming what does not fit.
void check_token_window(const KvLayout& k, const Policy& p) {
  const int64_t need = k.window_pages(p), have = k.pages_per_stream();
  if (need < 1 || need > have)
    fail("kv cache", "window", std::to_string(k.kept_tokens(p)) + " tokens",
         "at token granularity every stream holds its whole window: " + std::to_string(need) + " page(s) of " +
             std::to_string(k.tokens_per_page) + " tokens per stream, but " + std::to_string(k.slots()) +
             " slots give " + std::to_string(k.streams()) + " streams " + std::to_string(have) +
             " each (give the KV cache more macros or keep fewer tokens)");
  if (p.sink_tokens + k.recent_tokens(p) >= k.kept_tokens(p))
    fail("kv cache", "sinks", std::to_string(p.sink_tokens) + " tokens",
         "the window keeps " + std::to_string(k.kept_tokens(p)) + " tokens per stream" +
             (p.evict == KvEvict::h2o ? " (" + std::to_string(k.recent_tokens(p)) + " of them recent)" : "") +
             ": it needs a token besides the sinks" + (p.evict == KvEvict::h2o ? " and the recent ones" : ""));
}

// The sinks stay inside the window, which must keep at least one page besides them.
void check_sinks(const KvLayout& k, const Policy& p, int64_t window_limit) {
  if (k.sink_pages(p) > 0 && k.sink_pages(p) >= window_limit)
    fail("kv cache", "sinks", std::to_string(p.sink_tokens) + " tokens",
         "fewer pages (" + std::to_string(k.sink_pages(p)) + " of " + std::to_string(k.tokens_per_page) +
             " tokens) than the window keeps per stream (" + std::to_string(window_limit) +
             "); granularity=token keeps single tokens");
}
}  // namespace

StreamTokens stream_tokens(const KvLayout& k, const Policy& p, int64_t i, int64_t context) {
  if (i < 0 || i >= k.streams())
    fail("kv", "stream", std::to_string(i), "expected 0.." + std::to_string(k.streams() - 1));
  if (context < 0) fail("kv", "context", std::to_string(context), "expected >= 0");
  StreamTokens s;
  if (context == 0) return s;
  const int64_t tpp = k.tokens_per_page;
  s.pages = (context + tpp - 1) / tpp;
  s.last_page_tokens = context - (s.pages - 1) * tpp;
  const int64_t cap = k.pages_per_stream() + (i < k.streams_with_extra_page() ? 1 : 0);
  int64_t limit = cap;
  switch (p.overflow) {
    case KvOverflow::fail:
      if (s.pages > cap)
        fail("kv cache", "context", std::to_string(context),
             "does not fit in CIM: at most " + std::to_string(k.pages_per_stream() * tpp) +
                 " tokens per sequence for " + std::to_string(k.sequences) +
                 " sequence(s) (policy overflow=fail; try overflow=spill or overflow=window)");
      break;
    case KvOverflow::spill: break;
    case KvOverflow::window:
      limit = std::min(cap, k.window_pages(p));
      if (limit < 1)
        fail("kv cache", "window", "0 pages",
             "no KV slot for every stream: the window policy needs at least one page per stream (" +
                 std::to_string(k.streams()) + " streams, " + std::to_string(k.slots()) + " slots)");
      if (p.token_window()) {
        // every token past the window overwrites one slot in place: the stream keeps exactly
        // kept_tokens, in the pages that hold them (the last one possibly part-filled)
        check_token_window(k, p);
        const int64_t kept = k.kept_tokens(p), sinks = p.sink_tokens;
        s.resident_tokens = std::min(context, kept);
        s.resident_pages = (s.resident_tokens + tpp - 1) / tpp;
        s.last_page_tokens = s.resident_tokens - (s.resident_pages - 1) * tpp;
        s.evicted_tokens = context - s.resident_tokens;
        // the oldest rule cycles through the slots after the sinks; H2O may rewrite a slot as soon
        // as its token leaves the recent window (recent + 1 tokens later)
        const int64_t period = p.evict == KvEvict::h2o ? k.recent_tokens(p) + 1 : kept - sinks;
        s.cell_writes = 1 + (s.evicted_tokens + period - 1) / period;
        return s;
      }
      // (The resident count is the same with or without sinks: only which pages stay differs.)
      check_sinks(k, p, limit);
      break;
  }
  s.resident_pages = std::min(s.pages, limit);
  s.resident_tokens = s.resident_pages == 0 ? 0 : (s.resident_pages - 1) * tpp + s.last_page_tokens;
  const int64_t older = context - s.resident_tokens;
  (p.overflow == KvOverflow::window ? s.evicted_tokens : s.offchip_tokens) = older;
  if (s.resident_pages > 0) s.cell_writes = (s.pages + s.resident_pages - 1) / s.resident_pages;
  return s;
}

// ---- allocator -----------------------------------------------------------------------------

KvAllocator::KvAllocator(const KvLayout& layout, const Policy& policy)
    : layout_(layout), policy_(policy) {
  policy_.validate("kv allocator");
  if (layout_.streams() > (int64_t{1} << 24))
    fail("policy", "sequences", std::to_string(layout_.sequences),
         "more than 2^24 KV streams (sequences x layers x stored heads)");
  window_pages_ = layout_.window_pages(policy_);
  sink_pages_ = layout_.sink_pages(policy_);
  if (policy_.token_window()) {
    check_token_window(layout_, policy_);
    kept_tokens_ = layout_.kept_tokens(policy_);
  }
  length_.assign(layout_.sequences, 0);
  tables_.resize(layout_.streams());
  oldest_cim_.assign(layout_.streams(), 0);
}

int64_t KvAllocator::stream(int seq, int layer, int head) const {
  if (seq < 0 || seq >= layout_.sequences || layer < 0 || layer >= layout_.layers || head < 0 ||
      head >= layout_.stored_heads)
    fail("kv", "stream (sequence, layer, head)",
         std::to_string(seq) + "/" + std::to_string(layer) + "/" + std::to_string(head),
         "sequence, layer or stored head out of range");
  return (int64_t{seq} * layout_.layers + layer) * layout_.stored_heads + head;
}

int64_t KvAllocator::take_slot() {
  int64_t s = -1;
  if (!freed_.empty()) {
    s = freed_.top();
    freed_.pop();
  } else if (fresh_ < layout_.slots()) {
    s = fresh_++;
    slot_allocs_.push_back(0);
  } else {
    return -1;
  }
  ++in_use_;
  ++slot_allocs_[s];
  return s;
}

void KvAllocator::free_slot(int64_t slot) {
  freed_.push(slot);
  --in_use_;
}

void KvAllocator::new_page(int64_t st) {
  auto& t = tables_[st];
  if (t.empty() && policy_.overflow == KvOverflow::window) {
    const int64_t cap = layout_.pages_per_stream() + (st < layout_.streams_with_extra_page() ? 1 : 0);
    if (std::min(cap, window_pages_) >= 1) check_sinks(layout_, policy_, std::min(cap, window_pages_));
  }
  // The window's sink pages (the stream's first ones) are always on chip and never dropped: the
  // oldest page that may leave is the first one after them still on chip.
  const int64_t sinks = std::min<int64_t>(sink_pages_, static_cast<int64_t>(t.size()));
  const int64_t oldest = std::max(oldest_cim_[st], sinks);
  const int64_t on_chip = sinks + static_cast<int64_t>(std::count_if(
      t.begin() + oldest, t.end(), [](const PageRef& r) { return r.where == Where::cim; }));
  // The window keeps at most window_pages_ pages: the oldest leaves before a new one comes.
  if (policy_.overflow == KvOverflow::window && on_chip >= window_pages_ && on_chip > sinks) {
    PageRef& old = t[oldest];
    free_slot(old.slot);
    old = {Where::evicted, -1};
    oldest_cim_[st] = oldest + 1;
  }
  const int64_t slot = take_slot();
  if (slot >= 0) {
    t.push_back({Where::cim, slot});
    return;
  }
  const bool own_full_page = oldest_cim_[st] < static_cast<int64_t>(t.size()) &&
                             t[oldest_cim_[st]].where == Where::cim;
  switch (policy_.overflow) {
    case KvOverflow::fail:
      fail("kv cache", "slots", std::to_string(layout_.slots()),
           "all in use: at most " +
               std::to_string(layout_.pages_per_stream() * layout_.tokens_per_page) +
               " tokens per sequence fit for " + std::to_string(layout_.sequences) +
               " sequence(s) (policy overflow=fail; try overflow=spill or overflow=window)");
    case KvOverflow::spill:
      if (own_full_page) {  // the stream's oldest on-chip page moves off-chip, its slot is reused
        PageRef& old = t[oldest_cim_[st]];
        const int64_t s = old.slot;
        old = {Where::offchip, offchip_next_++};
        ++oldest_cim_[st];
        ++slot_allocs_[s];
        t.push_back({Where::cim, s});
      } else {
        t.push_back({Where::offchip, offchip_next_++});
        oldest_cim_[st] = static_cast<int64_t>(t.size());
      }
      return;
    case KvOverflow::window:
      // no slot was freed above, so `oldest` is still the page that may leave
      if (oldest >= static_cast<int64_t>(t.size()) || t[oldest].where != Where::cim)
        fail("kv cache", "slots", std::to_string(layout_.slots()),
             "all in use and the stream holds no page besides its sinks: the window policy needs "
             "at least one page per stream (" + std::to_string(layout_.streams()) + " streams)");
      {
        PageRef& old = t[oldest];
        const int64_t s = old.slot;
        old = {Where::evicted, -1};
        oldest_cim_[st] = oldest + 1;
        ++slot_allocs_[s];
        t.push_back({Where::cim, s});
      }
      return;
  }
}

void KvAllocator::append(int seq) {
  if (seq < 0 || seq >= layout_.sequences)
    fail("kv", "sequence", std::to_string(seq),
         "expected 0.." + std::to_string(layout_.sequences - 1));
  if (policy_.token_window()) {
    // token granularity: the window's pages are taken as the stream first fills them; then each
    // new token overwrites one token's slot in place (check_token_window made sure they fit)
    if (length_[seq] < kept_tokens_ && length_[seq] % layout_.tokens_per_page == 0) {
      const int64_t first = int64_t{seq} * layout_.streams_per_sequence();
      for (int64_t st = first; st < first + layout_.streams_per_sequence(); ++st)
        tables_[st].push_back({Where::cim, take_slot()});
    }
    ++length_[seq];
    return;
  }
  if (length_[seq] % layout_.tokens_per_page == 0) {
    const int64_t first = int64_t{seq} * layout_.streams_per_sequence();
    for (int64_t st = first; st < first + layout_.streams_per_sequence(); ++st) new_page(st);
  }
  ++length_[seq];
}

void KvAllocator::release(int seq) {
  if (seq < 0 || seq >= layout_.sequences)
    fail("kv", "sequence", std::to_string(seq),
         "expected 0.." + std::to_string(layout_.sequences - 1));
  const int64_t first = int64_t{seq} * layout_.streams_per_sequence();
  for (int64_t st = first; st < first + layout_.streams_per_sequence(); ++st) {
    for (const PageRef& r : tables_[st])
      if (r.where == Where::cim) free_slot(r.slot);
    tables_[st].clear();
    oldest_cim_[st] = 0;
  }
  length_[seq] = 0;
}

TokenLocation KvAllocator::locate(int seq, int layer, int head, int64_t token) const {
  const int64_t st = stream(seq, layer, head);
  if (token < 0 || token >= length_[seq])
    fail("kv", "token", std::to_string(token),
         "expected 0.." + std::to_string(length_[seq] - 1) + " (the sequence's length)");
  const int64_t tpp = layout_.tokens_per_page;
  int64_t index = token;  // the token's place in the stream's pages
  if (policy_.token_window()) {
    // the oldest rule: sinks stay, the others cycle through the slots after them
    if (policy_.evict == KvEvict::h2o)
      fail("kv", "evict", "h2o", "which tokens H2O keeps at token granularity depends on the attention (the runtime's)");
    const int64_t sinks = policy_.sink_tokens, ring = kept_tokens_ - sinks;
    if (token >= sinks && token < length_[seq] - ring) return TokenLocation{Where::evicted};
    if (token >= kept_tokens_) index = sinks + (token - sinks) % ring;
  }
  const PageRef& r = tables_[st][index / tpp];
  TokenLocation loc;
  loc.where = r.where;
  loc.offset = static_cast<int>(index % tpp);
  if (r.where == Where::cim) {
    loc.tile = r.slot / layout_.pages_per_tile;
    const int col = static_cast<int>((r.slot % layout_.pages_per_tile) * tpp) + loc.offset;
    loc.k_column_group = col;
    loc.v_row = col;
  } else if (r.where == Where::offchip) {
    loc.offchip_page = r.slot;
  }
  return loc;
}

}  // namespace kvcim::mapper
