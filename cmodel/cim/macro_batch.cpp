// Keyed and batched computes of a Macro: a token's read-noise draws come from a counter range
// named by its key, so the same token gives the same bits alone, in a batch, or after any other
// tokens (the evaluation runs every position of a sequence through a macro at once; the
// generation one position at a time). The weights stay in place for the whole batch: the macro's
// bit-planes (and cell deviations) are read from cache for every token after the first.
#include <algorithm>
#include <string>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/cim/macro_kind.hpp"
#include "kvcim/error.hpp"
#include "macro_kernels.hpp"

namespace kvcim::cmodel::cim {

namespace {
// The popcount terms of a batch's tokens on one row block (Macro::list_input_terms), listed by the
// first macro of a spec that reads planes of an id on this thread and read by the others (a
// matrix of 768 outputs has 24 macros on each 256-row block). Keyed by everything the lists
// depend on: the planes' contents (id) and rows (their first word), the call's shape and the
// spec's layout.
struct SharedTerms {
  uint64_t id = 0;
  const uint64_t* words = nullptr;
  size_t token_stride = 0, bit_stride = 0;
  int n_tokens = -1, n_rows = -1;
  MacroSpec spec;        // the fields the lists depend on (same_layout)
  size_t per_token = 0;  // room for a token's terms (max_input_terms)
  int steps = 0;         // a token's step starts
  std::vector<detail::InputTerm> terms;
  std::vector<int> step_begin;
};
bool same_layout(const MacroSpec& a, const MacroSpec& b) {
  return a.kind == b.kind && a.rows == b.rows && a.cols == b.cols && a.cell_bits == b.cell_bits &&
         a.input_bits == b.input_bits && a.input_signed == b.input_signed &&
         a.input_bits_per_cycle == b.input_bits_per_cycle && a.rows_per_cycle == b.rows_per_cycle;
}
}  // namespace

uint64_t Macro::read_noise_base(uint64_t key) {
  if (key >> kKeyBits)
    fail("cim::Macro", "noise key", std::to_string(key), "below 2^" + std::to_string(kKeyBits));
  // Above every other stream of the generator: the write-time draws count up from 0, the drift
  // and stuck-cell streams sit below 2^60.
  return (uint64_t{1} << 63) | (key << kDrawsPerKeyBits);
}

void Macro::compute_batch(const int32_t* x, int n_tokens, int n_rows, int64_t* y, int n_out, const uint64_t* keys,
                          int x_stride, const InputPlanes* planes) {
  if (n_tokens < 0) fail("cim::Macro", "n_tokens", std::to_string(n_tokens), "a count >= 0");
  if (x_stride < 0 || (x_stride > 0 && x_stride < n_rows))
    fail("cim::Macro", "x_stride", std::to_string(x_stride), "0 or at least n_rows (" + std::to_string(n_rows) + ")");
  const size_t stride = x_stride > 0 ? static_cast<size_t>(x_stride) : static_cast<size_t>(std::max(n_rows, 0));
  // Every token is checked before any is computed: a rejected batch changes nothing.
  for (int t = 0; t < n_tokens; ++t) {
    check_compute(x + static_cast<size_t>(t) * stride, n_rows, y + static_cast<size_t>(t) * n_out, n_out,
                  "cim::Macro::compute_batch");
    (void)read_noise_base(keys[t]);
  }
  const int64_t draws = int64_t{spec_.input_cycles()} * spec_.row_groups(n_rows) * n_out * spec_.slices_per_weight();
  if (draws >= (int64_t{1} << kDrawsPerKeyBits))
    fail("cim::Macro", "read-noise draws per token", std::to_string(draws),
         "below 2^" + std::to_string(kDrawsPerKeyBits) + " for keyed noise");
  if (planes != nullptr && (planes->input_bits != spec_.input_bits ||
                            planes->bit_stride < static_cast<size_t>((std::max(n_rows, 0) + 63) / 64) ||
                            (n_tokens > 0 && n_rows > 0 && planes->words == nullptr)))
    fail("cim::Macro::compute_batch", "planes",
         "input_bits " + std::to_string(planes->input_bits) + ", bit_stride " + std::to_string(planes->bit_stride),
         "the planes of " + std::to_string(spec_.input_bits) + "-bit codes of at least " + std::to_string(n_rows) +
             " rows (form_input_planes)");
  // The analog kind reads the given planes; every other kind (and the analog one without them)
  // its own compute.
  const bool shared = planes != nullptr && spec_.kind == MacroKind::analog;
  const MacroKindModel& model = macro_kind_model(spec_.kind);
  // Planes with an id: every token's terms listed once for the macros of this layout on these rows.
  thread_local SharedTerms listed;
  const bool share = shared && planes->id != 0 && n_tokens > 0 && n_rows > 0;
  if (share && !(listed.id == planes->id && listed.words == planes->words &&
                 listed.token_stride == planes->token_stride && listed.bit_stride == planes->bit_stride &&
                 listed.n_tokens == n_tokens && listed.n_rows == n_rows && same_layout(listed.spec, spec_))) {
    listed.id = 0;  // invalid until listed whole
    listed.per_token = max_input_terms(n_rows);
    listed.steps = static_cast<int>(pieces_.size()) * spec_.row_groups(n_rows) + 1;
    listed.terms.resize(listed.per_token * static_cast<size_t>(n_tokens));
    listed.step_begin.resize(static_cast<size_t>(listed.steps) * static_cast<size_t>(n_tokens));
    for (int t = 0; t < n_tokens; ++t)
      list_input_terms(planes->words + static_cast<size_t>(t) * planes->token_stride, planes->bit_stride, n_rows,
                       listed.terms.data() + listed.per_token * static_cast<size_t>(t),
                       listed.step_begin.data() + static_cast<size_t>(listed.steps) * static_cast<size_t>(t));
    listed.words = planes->words;
    listed.token_stride = planes->token_stride;
    listed.bit_stride = planes->bit_stride;
    listed.n_tokens = n_tokens;
    listed.n_rows = n_rows;
    listed.spec = spec_;
    listed.id = planes->id;
  }
  const uint64_t saved = noise_draws_;
  for (int t = 0; t < n_tokens; ++t) {
    noise_draws_ = read_noise_base(keys[t]);
    const int32_t* xt = x + static_cast<size_t>(t) * stride;
    int64_t* yt = y + static_cast<size_t>(t) * n_out;
    if (shared) {
      // The next token's planes asked for while this one computes: each bit-plane of a token is
      // its own cache line, read by this macro once per token (the wait for them was a tenth of
      // the call).
      if (t + 1 < n_tokens) {
        const uint64_t* next = planes->words + static_cast<size_t>(t + 1) * planes->token_stride;
        for (int b = 0; b < spec_.input_bits; ++b)
          for (int w = 0; w < (n_rows + 63) / 64; w += 8)  // 8 words a cache line
            __builtin_prefetch(next + static_cast<size_t>(b) * planes->bit_stride + w);
      }
      compute_analog_fast(xt, n_rows, yt, n_out, planes->words + static_cast<size_t>(t) * planes->token_stride,
                          planes->bit_stride,
                          share ? listed.terms.data() + listed.per_token * static_cast<size_t>(t) : nullptr,
                          share ? listed.step_begin.data() + static_cast<size_t>(listed.steps) * static_cast<size_t>(t)
                                : nullptr);
    } else {
      model.compute(*this, xt, n_rows, yt, n_out);
    }
  }
  noise_draws_ = saved;
}

void Macro::compute_keyed(const int32_t* x, int n_rows, int64_t* y, int n_out, uint64_t key) {
  compute_batch(x, 1, n_rows, y, n_out, &key);
}

void Macro::compute_reference_keyed(const int32_t* x, int n_rows, int64_t* y, int n_out, uint64_t key) {
  const uint64_t saved = noise_draws_;
  noise_draws_ = read_noise_base(key);
  compute_reference(x, n_rows, y, n_out);
  noise_draws_ = saved;
}

}  // namespace kvcim::cmodel::cim
