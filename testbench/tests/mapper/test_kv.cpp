// KV pages: the allocator's invariants (no slot shared, every token accounted for under each
// policy), its agreement with the closed form the figures use, and capacity hand formulas.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "kvcim/error.hpp"
#include "kvcim/mapper/shape.hpp"
#include "kvcim/mapper/placement.hpp"

using namespace kvcim::mapper;

namespace {

// Tiles of head_dim 4 at 8 bits holding `tokens` tokens in pages of `page`; one sequence.
KvLayout layout(int tokens, int page, int64_t tiles, int layers, int stored_heads) {
  KvLayout k;
  k.tile.head_dim = 4;
  k.tile.tokens = tokens;
  k.tile.kv_bits = 8;
  k.tokens_per_page = page;
  k.pages_per_tile = tokens / page;
  k.tile_cells = 2 * 4 * tokens * 8;
  k.tiles = tiles;
  k.layers = layers;
  k.stored_heads = stored_heads;
  k.sequences = 1;
  return k;
}

KvLayout small_layout(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  const int tokens = pick(0, 1) ? 4 : 8;
  const int divisors[] = {1, 2, 4, 8};
  int page;
  do page = divisors[pick(0, 3)];
  while (page > tokens);
  const int tiles = pick(0, 12), layers = pick(1, 3), stored_heads = pick(1, 3);  // in this order
  KvLayout k = layout(tokens, page, tiles, layers, stored_heads);
  k.query_heads_per_stream = pick(1, 2);
  k.sequences = pick(1, 3);
  return k;
}

Policy random_policy(std::mt19937_64& rng) {
  Policy p;
  p.overflow = static_cast<KvOverflow>(rng() % 3);
  if (p.overflow == KvOverflow::window && rng() % 2) p.window_tokens = 1 + rng() % 20;
  if (p.overflow == KvOverflow::window && rng() % 2) {
    p.sink_tokens = 1 + rng() % 8;
    if (p.window_tokens > 0 && p.sink_tokens >= p.window_tokens) p.sink_tokens = 0;
  }
  return p;
}

// Counts from a block table: tokens per location for a stream of `len` tokens.
StreamTokens count_table(const KvAllocator& a, int64_t st, int64_t len, int tpp) {
  StreamTokens s;
  const auto& t = a.block_table(st);
  s.pages = static_cast<int64_t>(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const int64_t tokens = std::min<int64_t>(tpp, len - static_cast<int64_t>(i) * tpp);
    if (t[i].where == Where::cim) {
      ++s.resident_pages;
      s.resident_tokens += tokens;
    } else if (t[i].where == Where::offchip) {
      s.offchip_tokens += tokens;
    } else {
      s.evicted_tokens += tokens;
    }
  }
  return s;
}

}  // namespace

TEST(Kv, AllocatorKeepsInvariantsAndMatchesTheClosedForm) {
  std::mt19937_64 rng(31337);
  for (int trial = 0; trial < 300; ++trial) {
    const KvLayout k = small_layout(rng);
    const Policy p = random_policy(rng);
    SCOPED_TRACE("trial " + std::to_string(trial) + " policy " + name(p.overflow) + " tiles " +
                 std::to_string(k.tiles) + " streams " + std::to_string(k.streams()));
    KvAllocator a(k, p);
    const int steps = 1 + static_cast<int>(rng() % 60);
    for (int t = 1; t <= steps; ++t) {
      bool alloc_failed = false;
      try {
        for (int s = 0; s < k.sequences; ++s) a.append(s);
      } catch (const kvcim::Error&) {
        alloc_failed = true;
      }
      bool closed_failed = false;
      for (int64_t st = 0; st < k.streams(); ++st) try {
          stream_tokens(k, p, st, t);
        } catch (const kvcim::Error&) {
          closed_failed = true;
        }
      ASSERT_EQ(alloc_failed, closed_failed) << "at context " << t;
      if (alloc_failed) break;
      // no slot held by two pages; all slots in range
      std::set<int64_t> slots;
      for (int64_t st = 0; st < k.streams(); ++st)
        for (const PageRef& r : a.block_table(st))
          if (r.where == Where::cim) {
            ASSERT_TRUE(slots.insert(r.slot).second) << "slot " << r.slot << " shared";
            ASSERT_LT(r.slot, k.slots());
          }
      ASSERT_EQ(static_cast<int64_t>(slots.size()), a.slots_in_use());
      for (int64_t st = 0; st < k.streams(); ++st) {
        const StreamTokens got = count_table(a, st, t, k.tokens_per_page);
        const StreamTokens want = stream_tokens(k, p, st, t);
        ASSERT_EQ(got.resident_tokens + got.offchip_tokens + got.evicted_tokens, t);  // all accounted
        ASSERT_EQ(got.pages, want.pages);
        ASSERT_EQ(got.resident_pages, want.resident_pages) << "stream " << st << " context " << t;
        ASSERT_EQ(got.resident_tokens, want.resident_tokens);
        ASSERT_EQ(got.offchip_tokens, want.offchip_tokens);
        ASSERT_EQ(got.evicted_tokens, want.evicted_tokens);
        if (p.overflow == KvOverflow::spill) {
          ASSERT_EQ(got.evicted_tokens, 0);
        }
        if (p.overflow == KvOverflow::fail) {
          ASSERT_EQ(got.resident_tokens, t);
        }
        if (p.overflow == KvOverflow::window) {
          ASSERT_EQ(got.offchip_tokens, 0);
          ASSERT_LE(got.resident_pages, k.window_pages(p));
          ASSERT_GE(got.resident_tokens, std::min<int64_t>(t, 1));  // the newest token is always kept
          // the sink pages (the stream's first) are never dropped
          const auto& table = a.block_table(st);
          for (int64_t i = 0; i < std::min<int64_t>(k.sink_pages(p), static_cast<int64_t>(table.size())); ++i)
            ASSERT_EQ(table[i].where, Where::cim) << "sink page " << i << " of stream " << st;
        }
      }
    }
  }
}

TEST(Kv, TokensOnChipNeverShareCells) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const KvLayout k = small_layout(rng);
    Policy p;
    p.overflow = KvOverflow::spill;
    KvAllocator a(k, p);
    const int steps = 1 + static_cast<int>(rng() % 40);
    for (int t = 0; t < steps; ++t)
      for (int s = 0; s < k.sequences; ++s) a.append(s);
    std::set<std::pair<int64_t, int>> cells;  // (tile, column group) of K == (tile, row) of V
    int64_t offchip = 0;
    for (int s = 0; s < k.sequences; ++s)
      for (int l = 0; l < k.layers; ++l)
        for (int h = 0; h < k.stored_heads; ++h)
          for (int64_t tok = 0; tok < steps; ++tok) {
            const TokenLocation loc = a.locate(s, l, h, tok);
            ASSERT_EQ(loc.offset, tok % k.tokens_per_page);
            if (loc.where == Where::cim) {
              ASSERT_EQ(loc.k_column_group, loc.v_row);
              ASSERT_LT(loc.k_column_group, k.tile.tokens);
              ASSERT_LT(loc.tile, k.tiles);
              ASSERT_TRUE(cells.insert({loc.tile, loc.k_column_group}).second);
            } else {
              ASSERT_EQ(loc.where, Where::offchip);
              ++offchip;
            }
          }
    EXPECT_EQ(static_cast<int64_t>(cells.size()) + offchip, k.streams() * steps);
    EXPECT_THROW(a.locate(0, 0, 0, steps), kvcim::Error);
  }
}

TEST(Kv, CapacityFollowsTheHandFormula) {
  const HardwareSpec hw = load_hardware_spec(default_hardware_spec_path());
  const kvcim::cmodel::Config c = shape_preset("stories260k").config;  // head_dim 8, 5 layers, 4 KV heads
  Policy p;
  p.tokens_per_page = 16;
  // A tile: K 8 x 64*8 + V 64 x 8*8 = 8192 one-bit cells; a 256x256 macro holds 8 tiles.
  const KvLayout k = kv_layout(c, hw, p, 10);
  EXPECT_EQ(k.tile_cells, 8192);
  EXPECT_EQ(k.tiles, 80);
  {  // K at 4 bits, V at 2: 8 x 64 x (4 + 2) = 3072 cells per tile, 8/3 as many tiles
    HardwareSpec narrow = hw;
    narrow.kv.k_bits = 4;
    narrow.kv.v_bits = 2;
    const KvLayout n = kv_layout(c, narrow, p, 10);
    EXPECT_EQ(n.tile_cells, 3072);
    EXPECT_EQ(n.tiles, 10 * 65536 / 3072);
  }
  EXPECT_EQ(k.pages_per_tile, 4);
  EXPECT_EQ(k.slots(), 320);
  EXPECT_EQ(k.streams(), 20);           // 5 layers x 4 KV heads (GQA sharing)
  EXPECT_EQ(k.pages_per_stream(), 16);  // 320 / 20
  EXPECT_EQ(k.query_heads_per_stream, 2);
  // fail policy: 256 tokens fit, 257 do not
  KvAllocator a(k, p);
  for (int t = 0; t < 256; ++t) a.append(0);
  EXPECT_EQ(a.slots_in_use(), 320);
  try {
    a.append(0);
    FAIL() << "257th token accepted";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most 256 tokens"), std::string::npos) << e.what();
  }
  // without GQA sharing every query head stores its own copy: twice the streams, half the context
  Policy q = p;
  q.gqa_sharing = false;
  const KvLayout nk = kv_layout(c, hw, q, 10);
  EXPECT_EQ(nk.streams(), 40);
  EXPECT_EQ(nk.pages_per_stream() * nk.tokens_per_page, 128);
  // three sequences share the slots
  Policy s3 = p;
  s3.sequences = 3;
  const KvLayout k3 = kv_layout(c, hw, s3, 10);
  EXPECT_EQ(k3.pages_per_stream(), 5);  // floor(320 / 60)
  EXPECT_EQ(k3.streams_with_extra_page(), 20);
  // a page must divide the tile
  Policy bad = p;
  bad.tokens_per_page = 24;
  EXPECT_THROW(kv_layout(c, hw, bad, 10), kvcim::Error);
}

TEST(Kv, ReleasedSlotsAreReusedLowestFirstAndWearFollowsTheFormula) {
  const KvLayout k = layout(4, 2, 3, 1, 2);  // 6 slots; 2 streams: 3 pages each
  Policy p;
  p.overflow = KvOverflow::spill;
  KvAllocator a(k, p);
  const int64_t context = 11;  // 6 pages per stream, 3 on chip: each slot written twice
  const int rounds = 4;
  for (int r = 0; r < rounds; ++r) {
    for (int t = 0; t < context; ++t) a.append(0);
    a.release(0);
    EXPECT_EQ(a.slots_in_use(), 0);
  }
  const StreamTokens s = stream_tokens(k, p, 0, context);
  EXPECT_EQ(s.pages, 6);
  EXPECT_EQ(s.resident_pages, 3);
  const int64_t per_sequence = (s.pages + s.resident_pages - 1) / s.resident_pages;  // 2
  for (int64_t n : a.slot_allocations()) EXPECT_EQ(n, rounds * per_sequence);
  // fresh sequence after a release starts at slot 0 again
  a.append(0);
  EXPECT_EQ(a.block_table(0)[0].slot, 0);
  EXPECT_EQ(a.block_table(1)[0].slot, 1);
}

TEST(Kv, TokenWindowKeepsSinksAndNewestTokensInItsPages) {
  // 2 sinks + 4 recent in pages of 4 tokens: two pages per stream, taken as the stream first
  // fills them; then each token overwrites the oldest non-sink token's place in them.
  const KvLayout k = layout(8, 4, 4, 2, 1);
  const Policy p = parse_policy("sinks=2,window=6,granularity=token");
  KvAllocator a(k, p);
  const int context = 20;
  for (int t = 0; t < context; ++t) a.append(0);
  for (int64_t st = 0; st < k.streams(); ++st) EXPECT_EQ(a.block_table(st).size(), 2u);
  EXPECT_EQ(a.slots_in_use(), 4);
  const StreamTokens s = stream_tokens(k, p, 0, context);
  EXPECT_EQ(s.resident_tokens, 6);
  EXPECT_EQ(s.resident_pages, 2);
  EXPECT_EQ(s.last_page_tokens, 2);
  EXPECT_EQ(s.evicted_tokens, 14);
  EXPECT_EQ(s.cell_writes, 1 + 4);  // 14 overwrites over the 4 slots after the sinks
  std::set<std::pair<int64_t, int>> places;
  for (int t = 0; t < context; ++t) {
    const TokenLocation l = a.locate(0, 1, 0, t);
    const bool kept = t < 2 || t >= context - 4;
    ASSERT_EQ(l.where, kept ? Where::cim : Where::evicted) << "token " << t;
    if (kept) {
      EXPECT_TRUE(places.insert({l.tile, l.k_column_group}).second) << "token " << t;
    }
  }
  // StreamingLLM's 4 sinks in a 16-token window fit one 64-token page at token granularity
  KvLayout big = k;
  big.tile.tokens = big.tokens_per_page = 64;
  big.pages_per_tile = 1;
  EXPECT_EQ(stream_tokens(big, parse_policy("sinks=4,window=16,granularity=token"), 0, 100).resident_tokens, 16);
  EXPECT_THROW(stream_tokens(big, parse_policy("sinks=4,window=16"), 0, 100), kvcim::Error);  // pages
  // a window larger than the slots give every stream: one line before any work
  try {
    KvAllocator too_big(k, parse_policy("window=20,granularity=token"));
    ADD_FAILURE() << "accepted";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds its whole window: 5 page(s)"), std::string::npos) << e.what();
  }
  KvAllocator h(k, parse_policy("sinks=2,window=6,granularity=token,evict=h2o"));
  h.append(0);
  EXPECT_THROW(h.locate(0, 0, 0, 0), kvcim::Error) << "H2O's tokens are the runtime's";
}
