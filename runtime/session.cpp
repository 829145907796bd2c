#include "kvcim/runtime/session.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/error.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;

namespace {

void check_options(const Config& c, const SessionOptions& o, int prompt_tokens) {
  if (o.steps <= 0) fail("run", "steps", std::to_string(o.steps), "expected a positive number");
  if (o.steps > c.seq_len)
    fail("run", "steps", std::to_string(o.steps),
         "exceeds the model's context of " + std::to_string(c.seq_len) + " positions");
  if (prompt_tokens > o.steps)
    fail("run", "prompt tokens", std::to_string(prompt_tokens),
         "longer than steps = " + std::to_string(o.steps) + " (the prompt must fit the run)");
  // checked even when the evaluation is skipped: a bad value is a mistake either way
  if (o.eval_tokens < 1)
    fail("run", "eval_tokens", std::to_string(o.eval_tokens), "expected at least 1");
  // The CIM attention keeps every position of a stream (or its KV window's tiles), so a model
  // whose attention sees only the last sliding_window positions runs only where the window
  // covers the run: the decode's steps, and the evaluation's sequences of the model's context.
  const int context = o.eval_text.empty() ? o.steps : std::max(o.steps, c.seq_len);
  if (c.sliding_window > 0 && c.sliding_window < context)
    fail("run", "sliding_window", std::to_string(c.sliding_window),
         "smaller than the run's context of " + std::to_string(context) + " positions (" +
             (o.eval_text.empty() ? "the steps" : "the evaluation's sequences of the model's whole context") +
             "): the CIM attention does not slide; run at most " + std::to_string(c.sliding_window) +
             " steps" + (o.eval_text.empty() ? "" : " without the evaluation"));
}

// Work of the whole chip, whichever backend ran the decoder's operations: the shared elementwise
// work and embedding (other), leakage, clock and control (chip). The CIM chip's own periphery
// charges them; the conventional engine's figures for them stay on its side.
bool chip_wide(energy::Op op) { return op == energy::Op::other || op == energy::Op::chip; }

}  // namespace

void add_ops(energy::Ledger& to, const energy::Ledger& from, const std::function<bool(energy::Op)>& keep) {
  for (int layer = energy::kModelLevel; layer < from.n_layers(); ++layer)
    for (energy::Op op : energy::all_ops()) {
      if (!keep(op)) continue;
      for (energy::EventKind k : energy::all_event_kinds()) to.add(layer, op, k, from.count(layer, op, k));
    }
}

bool on_cim(energy::Op op, const BackendChoice& choice) {
  using energy::Op;
  switch (op) {
    case Op::q_proj: case Op::k_proj: case Op::v_proj: case Op::o_proj:
    case Op::ffn_w1: case Op::ffn_w2: case Op::ffn_w3: case Op::classifier:
      return choice.linear != BackendKind::reference;
    case Op::attn_scores: case Op::softmax: case Op::attn_weighted_sum: case Op::kv_write:
      return choice.attention != BackendKind::reference;
    case Op::other:
    case Op::chip:
      return false;
  }
  return false;
}

namespace {

// One sequence of the batch: the CIM run, its float shadow fed the same tokens (accuracy at
// every step), the free-running reference (the reference text), their samplers and outputs.
struct Sequence {
  Sequence(const Config& c, const Weights& w, std::unique_ptr<SessionBackend> backend, std::vector<int> ids,
           const SessionOptions& o, uint64_t seed)
      : prompt(std::move(ids)), cim(std::move(backend)), shadow(c, w), free_ref(c, w), s_cim(c), s_shadow(c),
        s_free(c), sample_cim(o.temperature, o.top_p, seed), sample_ref(o.temperature, o.top_p, seed),
        token(prompt[0]), ref_token(prompt[0]), printed{token}, ref_printed{ref_token} {
    out.seed = seed;
    out.prompt_tokens = static_cast<int>(prompt.size());
    out.tokens.push_back(token);
    out.reference_tokens.push_back(ref_token);
  }
  std::vector<int> prompt;
  std::unique_ptr<SessionBackend> cim;
  ReferenceBackend shadow, free_ref;
  RunState s_cim, s_shadow, s_free;
  Sampler sample_cim, sample_ref;
  int token, ref_token;
  bool done = false, ref_done = false;
  // While the free-running reference has been fed the CIM run's tokens it is the shadow, float
  // for float, so it shares the shadow's pass; from the first token where they differ it runs on
  // its own, its cache taken from the shadow's (the same tokens at every earlier position).
  bool ref_shares_shadow = true;
  std::vector<int> printed, ref_printed;
  SequenceResult out;
};

// The float passes of a position: the shadow, and the reference (on its own once it has left
// the CIM run's tokens). Returns the shadow's logits; `free` gets the reference's.
const Vector& reference_passes(const Config& c, const Weights& w, Sequence& s, int pos, const Vector** free) {
  if (s.ref_shares_shadow && !s.ref_done && s.ref_token != s.token) {
    s.free_ref.cache().copy_from(s.shadow.cache());
    s.ref_shares_shadow = false;
  }
  const Vector& shadow = forward(c, w, s.s_shadow, s.shadow, s.token, pos);
  if (!s.ref_done) *free = s.ref_shares_shadow ? &shadow : &forward(c, w, s.s_free, s.free_ref, s.ref_token, pos);
  return shadow;
}

// One position of one sequence: the CIM pass (the float passes need nothing from it, so with two
// threads they run beside it; results do not depend on the thread count), the logits compared,
// the next tokens of the CIM run and of the reference.
void decode_position(const Config& c, const Weights& w, const Tokenizer& tok, Sequence& s, int pos, int steps) {
  // On the GEMV pool, so within the run's thread bound (one thread: all serial). A model whose
  // matrices the pool splits runs the passes one after the other, each on both threads; a smaller
  // one runs them side by side as the two "rows" of one pool job (std::async would add a third
  // thread beside the pool's helper).
  struct Passes {
    const Config& c;
    const Weights& w;
    Sequence& s;
    int pos;
    const Vector* shadow = nullptr;
    const Vector* free = nullptr;
    const Vector* logits = nullptr;
  } p{c, w, s, pos};
  const RowsFn both = [](void* ctx, int r0, int r1) {
    auto& q = *static_cast<Passes*>(ctx);
    for (int r = r0; r < r1; ++r) {
      if (r == 0) q.logits = &forward(q.c, q.w, q.s.s_cim, *q.s.cim, q.s.token, q.pos);
      else q.shadow = &reference_passes(q.c, q.w, q.s, q.pos, &q.free);
    }
  };
  const bool matrices_split = static_cast<int64_t>(c.dim) * c.hidden_dim >= gemv_parallel_min();
  if (!matrices_split) parallel_rows(2, std::numeric_limits<int64_t>::max(), both, &p, 1);
  else both(&p, 0, 2);
  const Vector* shadow = p.shadow;
  const Vector* free = p.free;
  const Vector& logits = *p.logits;
  s.out.steps.push_back(compare_logits(*shadow, logits, pos));

  const bool in_prompt = pos + 1 < static_cast<int>(s.prompt.size());
  const int next = in_prompt ? s.prompt[static_cast<size_t>(pos) + 1] : s.sample_cim.sample(logits);
  if (!s.ref_done) {
    const int ref_next = in_prompt ? s.prompt[static_cast<size_t>(pos) + 1] : s.sample_ref.sample(*free);
    if (tok.ends_text(ref_next)) {
      s.ref_done = true;
    } else {
      s.ref_printed.push_back(ref_next);
      s.ref_token = ref_next;
      if (pos + 1 < steps) s.out.reference_tokens.push_back(ref_next);
    }
  }
  if (tok.ends_text(next)) {  // as run.c: BOS ends the story (a Hugging Face model: EOS)
    s.done = true;
    return;
  }
  s.printed.push_back(next);
  s.token = next;
  if (pos + 1 < steps) s.out.tokens.push_back(next);
}

// The step's events that are not simulated: operations on a reference backend cost what the
// conventional engine pays for them; the chip-wide terms (other, chip) and the CIM operations'
// periphery come from the CIM chip's own periphery. The conventional baseline does the same step.
void charge_step(GenerationResult& r, const SessionHardware& hw, const BackendChoice& backends, int pos,
                 int sequences) {
  if (hw.conventional) {
    const energy::Ledger conv = hw.conventional(pos, sequences);
    r.conventional += conv;
    add_ops(r.ledger, conv, [&](energy::Op op) { return !on_cim(op, backends) && !chip_wide(op); });
  }
  if (hw.periphery)
    add_ops(r.ledger, hw.periphery(pos, sequences),
            [&](energy::Op op) { return on_cim(op, backends) || chip_wide(op); });
}

}  // namespace

GenerationResult run_generation(const Checkpoint& ck, const Tokenizer& tok, const SessionOptions& o,
                                const SessionHardware& hw) {
  const Config& c = ck.config;
  const Weights& w = ck.weights;
  if (tok.vocab_size() != c.vocab_size)
    fail(tok.path(), "vocabulary", std::to_string(tok.vocab_size()) + " entries",
         "the model has vocab_size " + std::to_string(c.vocab_size));
  if (o.sequences < 1) fail("run", "sequences", std::to_string(o.sequences), "expected at least 1");
  if (o.prompts.empty()) fail("run", "prompts", "none", "expected at least one prompt");
  std::vector<std::vector<int>> prompts;
  for (const std::string& p : o.prompts) {
    prompts.push_back(tok.encode_prompt(p));
    check_options(c, o, static_cast<int>(prompts.back().size()));
  }
  // o.threads bounds every thread of the run: the GEMV pool's helper (row-parallel GEMVs, the
  // evaluation's macro blocks, the two passes of a position) runs only when it is 2, and the
  // pool's own choice (1 on a fully loaded machine) still applies. Restored when the run ends.
  struct ThreadBound {
    int before = gemv_threads();
    explicit ThreadBound(int most) { set_gemv_threads(std::min(before, most)); }
    ~ThreadBound() { set_gemv_threads(before); }
  } bound(o.threads);
  const auto start = std::chrono::steady_clock::now();

  GenerationResult r;
  r.ledger = r.simulated = r.conventional = r.load_ledger = energy::Ledger(c.n_layers);
  // The weights in their macros (none when the linear layers are reference), written once: the
  // batch and the evaluation share them, one after the other (a CimLinear has scratch, so never
  // on two threads at once); the macros' read noise is keyed by stream and position, so no run's
  // draws depend on another's.
  auto backend = [&](const std::shared_ptr<CimWeights>& linears) {
    auto b = std::make_unique<SessionBackend>(c, w, o.backends, linears, hw.tiles, hw.k_per_channel, hw.kv_window);
    b->set_token_interval_ns(hw.token_interval_ns);
    return b;
  };
  // The evaluation's corpus first: its sampling is float work (the reference's KV caches of the
  // sequences it samples side by side), done before the macros are written beside the floats;
  // the backends' own checks (attention tiles, window) come before its seconds of sampling.
  EvalCorpusOptions eo;
  std::optional<EvalCorpus> corpus;
  if (!o.eval_text.empty()) {
    BackendChoice attention_only = o.backends;
    attention_only.linear = BackendKind::reference;
    SessionBackend(c, w, attention_only, nullptr, hw.tiles, hw.k_per_channel, hw.kv_window);
    eo.tokens = o.eval_tokens;
    eo.seed = o.eval_seed;
    eo.text = o.eval_text;
    corpus = build_eval_corpus(ck, tok, eo);
  }
  std::vector<std::unique_ptr<Sequence>> batch;
  const std::shared_ptr<CimWeights> linears =
      o.backends.linear == BackendKind::cim ? std::make_shared<CimWeights>(c, w, hw.macro, hw.blocks) : nullptr;
  for (int b = 0; b < o.sequences; ++b) {
    const size_t p = static_cast<size_t>(b) % prompts.size();
    const uint64_t seed = o.seed + static_cast<uint64_t>(b);
    batch.push_back(std::make_unique<Sequence>(c, w, backend(linears), prompts[p], o, seed));
    batch.back()->out.prompt = o.prompts[p];
    // the sequence's read noise follows its sampler seed: a batch member makes a single run's tokens
    batch.back()->cim->set_noise_stream(seed % kEvalStreams);
  }

  // The evaluation, on its own backend over the same macros: fresh caches per sequence, its
  // events kept out of the generation's ledger, and the generation's tokens (and read-noise
  // draws, keyed) independent of the evaluation's size.
  if (corpus) {
    auto make_cim = [&] { return backend(linears); };
    r.evaluation = summarize_scores(score_corpus(c, w, make_cim, *corpus, o.threads, o.eval_progress), o.bootstrap,
                                    corpus->sampled_sequences);
    r.eval_prompts = eo.prompts;
    corpus.reset();
  }

  // The batch, one position per step: every sequence still decoding makes its next token.
  for (int pos = 0; pos < o.steps; ++pos) {
    int active = 0;
    for (auto& s : batch)
      if (!s->done) {
        decode_position(c, w, tok, *s, pos, o.steps);
        ++active;
      }
    if (active == 0) break;
    r.active.push_back(active);
    r.forward_passes += active;
    charge_step(r, hw, o.backends, pos, active);
    if (o.progress) o.progress(pos + 1, o.steps);
  }

  std::vector<StepAccuracy> all_steps;
  for (auto& s : batch) {
    s->out.text = tok.decode_all(s->printed);
    s->out.reference_text = tok.decode_all(s->ref_printed);
    s->out.accuracy = summarize(s->out.steps);
    all_steps.insert(all_steps.end(), s->out.steps.begin(), s->out.steps.end());
    r.simulated += s->cim->ledger();
    r.sequences.push_back(std::move(s->out));
  }
  static_cast<SequenceResult&>(r) = r.sequences.front();
  r.accuracy = summarize(all_steps);
  r.ledger += r.simulated;
  if (linears) r.load_ledger = linears->load_ledger();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kvcim::runtime
