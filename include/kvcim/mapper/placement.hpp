// The Placement: where every weight block and every token's K and V live, for a model shape on a
// hardware spec under a policy. Pure functions of their inputs; nothing is simulated.
//
// Weights. A matrix W (n_in inputs x n_out outputs) is cut into row tiles of `rows` inputs and
// column tiles of weights_per_row() outputs (each output a column group of slices_per_weight()
// columns); block b = (b / col_tiles, b % col_tiles) sits alone on one macro, at the macro's
// origin (the macro C model computes from its origin). Matrices are placed in token order
// (replica 0: layer 0 q,k,v,o,w1,w2,w3, ..., classifier; then replica 1, ...) on consecutive
// macros; blocks that find no macro stay off-chip and are computed by the digital engine.
//
// KV cache. The macros not given to weights hold KV tiles (the attention tile: a K macro of
// head_dim x tokens_per_tile*kv_bits cells and a V macro of tokens_per_tile x head_dim*kv_bits
// cells), counted by cell area. A tile holds tokens_per_tile / tokens_per_page page slots; a page
// holds tokens_per_page consecutive tokens of one stream (sequence, layer, stored KV head), its
// K in column groups [slot_in_tile * tpp, ...) and its V in rows [slot_in_tile * tpp, ...).
// Block tables map each stream's logical pages to slots (or off-chip, or evicted), as in
// PagedAttention. docs/mapper.md gives the formulas.
#pragma once
#include <cstdint>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "kvcim/cmodel/energy/events.hpp"
#include "kvcim/cmodel/weights.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/mapper/shape.hpp"
#include "kvcim/mapper/sizing.hpp"

namespace kvcim::mapper {

using cmodel::energy::Op;

// ---- weights -------------------------------------------------------------------------------
struct WeightBlock {
  int row0 = 0, rows = 0;  // inputs [row0, row0 + rows)
  int out0 = 0, outs = 0;  // outputs [out0, out0 + outs)
  int64_t macro = -1;      // the macro holding it, or -1 when off-chip
};

struct MatrixPlacement {
  Op op;
  int layer;    // cmodel::energy::kModelLevel for the classifier
  int replica;
  int64_t n_in, n_out;
  int row_tiles, col_tiles;
  int64_t first_macro;    // macro of block 0 when onchip_blocks > 0, else -1
  int64_t onchip_blocks;  // blocks [0, onchip_blocks) sit on macros first_macro + b

  int64_t blocks() const { return int64_t{row_tiles} * col_tiles; }
  WeightBlock block(int64_t b, const cmodel::cim::MacroSpec& spec) const;
  // Cells a block occupies: rows x outs x slices_per_weight.
  int64_t block_cells(int64_t b, const cmodel::cim::MacroSpec& spec) const;
};

struct WeightPlacement {
  std::vector<MatrixPlacement> matrices;  // replica-major, token order
  int64_t macros_available = 0;           // macros the weights were allowed to use
  int64_t macros_used = 0;
  int64_t cells_used = 0;                 // cells holding weight bits
  int64_t blocks_offchip = 0;
  int64_t elements_onchip = 0, elements_total = 0;  // all replicas

  // The matrix and block on `macro`, if it holds weights.
  std::optional<std::pair<int, int64_t>> macro_contents(int64_t macro) const;
  // Index of (op, layer, replica) in `matrices`; throws if absent.
  int find(Op op, int layer, int replica = 0) const;
};

// Blocks per matrix (row_tiles, col_tiles) for a spec.
int row_tiles(int64_t n_in, const cmodel::cim::MacroSpec& spec);
int col_tiles(int64_t n_out, const cmodel::cim::MacroSpec& spec);
// Macros all replicas of all matrices need.
int64_t weight_macros_needed(const cmodel::Config& c, const cmodel::cim::MacroSpec& spec, int replicas);
WeightPlacement place_weights(const cmodel::Config& c, const cmodel::cim::MacroSpec& spec,
                              int replicas, int64_t macros_available);

// ---- KV cache ------------------------------------------------------------------------------
struct KvLayout {
  cmodel::cim::TileParams tile;   // head_dim = the model's
  int tokens_per_page = 0;
  int pages_per_tile = 0;         // tile.tokens / tokens_per_page
  int64_t tile_cells = 0;         // 2 x head_dim x tokens_per_tile x kv_bits
  int64_t macros = 0;             // macros given to the KV cache
  int64_t tiles = 0;              // floor(macros x macro_cells / tile_cells)
  int layers = 0;
  int stored_heads = 0;           // n_kv_heads (GQA sharing) or n_heads (a copy per query head)
  int query_heads_per_stream = 1; // kv_group with sharing, else 1
  int sequences = 1;

  int64_t slots() const { return tiles * pages_per_tile; }
  int64_t streams_per_sequence() const { return int64_t{layers} * stored_heads; }
  int64_t streams() const { return streams_per_sequence() * sequences; }
  int64_t page_cells() const { return tile_cells / pages_per_tile; }
  int64_t token_cells() const { return 2 * int64_t{tile.head_dim} * tile.kv_bits; }
  // Pages every stream of every sequence can hold on chip at once, and how many streams (the
  // first ones in allocation order) hold one more.
  int64_t pages_per_stream() const;
  int64_t streams_with_extra_page() const;
  // Pages the window policy keeps per stream (policy window rounded up to pages; 0 = fit).
  int64_t window_pages(const Policy& p) const;
  // The stream's first pages the window policy never drops (policy sinks rounded up to pages).
  int64_t sink_pages(const Policy& p) const;
  // Token granularity (Policy::token_window): the tokens a stream keeps (the window, or its
  // pages' tokens under window=fit), and the newest of them evict=h2o always keeps (the policy's
  // recent, or half of those after the sinks).
  int64_t kept_tokens(const Policy& p) const;
  int64_t recent_tokens(const Policy& p) const;
};

KvLayout kv_layout(const cmodel::Config& c, const HardwareSpec& hw, const Policy& p,
                   int64_t kv_macros);

enum class Where : uint8_t { cim, offchip, evicted };
const char* name(Where w);

struct PageRef {
  Where where = Where::cim;
  int64_t slot = -1;  // cim: physical slot (tile x pages_per_tile + slot in tile); offchip: page id
};

struct TokenLocation {
  Where where = Where::cim;
  int64_t tile = -1;          // cim only
  int k_column_group = -1;    // cim: column group of the K macro holding the token
  int v_row = -1;             // cim: row of the V macro holding the token
  int64_t offchip_page = -1;  // offchip only
  int offset = 0;             // token within its page
};

// Allocates pages as sequences grow (PagedAttention-style block tables). Deterministic: the
// lowest free slot is taken; overflow follows the policy.
class KvAllocator {
 public:
  KvAllocator(const KvLayout& layout, const Policy& policy);

  // Writes the next token of sequence `seq` into every stream of that sequence (all layers and
  // stored heads). Throws kvcim::Error under the fail policy when no slot is free.
  void append(int seq);
  // The sequence ended: its on-chip slots are freed and its pages forgotten.
  void release(int seq);

  int64_t length(int seq) const { return length_.at(seq); }
  int64_t stream(int seq, int layer, int head) const;
  const std::vector<PageRef>& block_table(int64_t stream) const { return tables_.at(stream); }
  TokenLocation locate(int seq, int layer, int head, int64_t token) const;

  int64_t slots_in_use() const { return in_use_; }
  int64_t offchip_pages() const { return offchip_next_; }
  // Times each slot was (re)allocated: a cell of a slot is written at most once per allocation.
  const std::vector<int64_t>& slot_allocations() const { return slot_allocs_; }
  const KvLayout& layout() const { return layout_; }

 private:
  int64_t take_slot();
  void free_slot(int64_t slot);
  void new_page(int64_t stream);

  KvLayout layout_;
  Policy policy_;
  int64_t window_pages_ = 0;
  std::vector<int64_t> length_;
  std::vector<std::vector<PageRef>> tables_;
  int64_t sink_pages_ = 0;            // window policy: the first pages of a stream, never dropped
  int64_t kept_tokens_ = 0;           // token granularity: tokens a stream keeps
  std::vector<int64_t> oldest_cim_;  // per stream: index of its oldest page still on chip
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> freed_;
  int64_t fresh_ = 0, in_use_ = 0, offchip_next_ = 0;
  std::vector<int64_t> slot_allocs_;
};

// ---- closed form of what the allocator does when all sequences grow together ----------------
// For stream `i` (allocation order; sequence 0 holds streams 0..streams_per_sequence-1) of
// sequences that all hold `context` tokens: tokens in on-chip pages, off-chip and evicted.
struct StreamTokens {
  int64_t pages = 0;            // logical pages
  int64_t resident_pages = 0;   // on chip (the newest ones)
  int64_t resident_tokens = 0;  // tokens in those pages
  int64_t last_page_tokens = 0; // tokens in the newest resident page
  int64_t cell_writes = 0;      // writes of the stream's most-written KV cell in the sequence
  int64_t offchip_tokens = 0;
  int64_t evicted_tokens = 0;
};
// Throws kvcim::Error under the fail policy (and the window policy) when the context does not fit.
StreamTokens stream_tokens(const KvLayout& layout, const Policy& policy, int64_t stream,
                           int64_t context);

// ---- the whole placement --------------------------------------------------------------------
struct Placement {
  ModelShape shape;
  HardwareSpec hw;
  Policy policy;
  WeightPlacement weights;
  KvLayout kv;
  KvAllocator allocator;  // every sequence grown to `context` tokens in lock-step (when grown)
  int64_t context = 0;    // tokens each stream attends over (the sliding window applied)
  int64_t requested_context = 0;  // what was asked for
  // The allocator holds block tables only up to kMaxGrownPages pages (all streams); larger
  // placements are described by the closed form alone (stream_tokens).
  bool allocator_grown = false;
  std::optional<Sizing> sizing;  // set when the chip was sized for the model
  // A named conventional machine (configs/machines) the figures add beside the synthetic engine
  // (`kvcim map --baseline`, kvcim.map(baseline=)); "synthetic": none.
  std::string baseline = "synthetic";
};
inline constexpr int64_t kMaxGrownPages = int64_t{1} << 20;

// The macros the KV cache gets beside `weight_macros` of weights: under kv_fraction=auto (and on
// an attention-only chip) the pages `context` tokens of every sequence need (kv_macros_needed:
// whole pages per stream, tiles and macros, the headroom there is), at most what the spec has
// left; `hw` becomes the chip as built, its other macros not built (never filled with KV nobody
// uses). An explicit kv_fraction keeps its share of the spec. context 0: every macro the weights
// leave, the spec unchanged (the capacity default_context asks about).
int64_t place_kv_macros(const cmodel::Config& c, HardwareSpec& hw, const Policy& p, int64_t weight_macros,
                        int64_t context);

// How many macros the weights get under the policy's split.
int64_t weight_macro_budget(const cmodel::Config& c, const HardwareSpec& hw, const Policy& p);

// The decoder operation a weight matrix serves, and the blocks of one matrix (layer ignored for
// the classifier) in block order, each with its macro (-1 = off-chip): what the runtime needs to
// load a matrix as placed.
Op op_of(cmodel::MatrixKind kind);
std::vector<WeightBlock> matrix_blocks(const Placement& p, int layer, cmodel::MatrixKind kind,
                                       int replica = 0);

// Off-chip bytes of a placement: weight blocks not in CIM and the embedding table (weight_bits
// each), plus `offchip_token_heads` spilled tokens of one stream each (K and V, kv_bits).
int64_t offchip_bytes(const cmodel::Config& c, const HardwareSpec& hw, const WeightPlacement& w,
                      int64_t offchip_token_heads);

// Places weights and grows `policy.sequences` sequences to `context` tokens. context 0 = no KV
// allocated yet. Throws kvcim::Error when the fail policy runs out of slots (naming the context
// that fits), when off-chip memory (offchip.capacity) cannot hold what is not in CIM, or the
// inputs are invalid.
Placement place(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                int64_t context);

}  // namespace kvcim::mapper
