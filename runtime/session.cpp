#include "kvcim/runtime/session.hpp"

#include <chrono>
#include <future>

#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/error.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;

namespace {

void check_options(const Config& c, const SessionOptions& o, int prompt_tokens) {
  if (o.steps <= 0) fail("--steps", "steps", std::to_string(o.steps), "expected a positive number");
  if (o.steps > c.seq_len)
    fail("--steps", "steps", std::to_string(o.steps),
         "exceeds the model's context of " + std::to_string(c.seq_len) + " positions");
  if (prompt_tokens > o.steps)
    fail("--prompt", "prompt tokens", std::to_string(prompt_tokens),
         "longer than --steps " + std::to_string(o.steps) + " (the prompt must fit the run)");
  // checked even when the evaluation is skipped: a bad value is a mistake either way
  if (o.eval_tokens < 1)
    fail("--eval-tokens", "eval_tokens", std::to_string(o.eval_tokens), "expected at least 1");
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

GenerationResult run_generation(const Checkpoint& ck, const Tokenizer& tok, const SessionOptions& o,
                                const SessionHardware& hw) {
  const Config& c = ck.config;
  const Weights& w = ck.weights;
  if (tok.vocab_size() != c.vocab_size)
    fail(tok.path(), "vocabulary", std::to_string(tok.vocab_size()) + " entries",
         "the model has vocab_size " + std::to_string(c.vocab_size));
  const std::vector<int> prompt = tok.encode(o.prompt, true, false);
  check_options(c, o, static_cast<int>(prompt.size()));
  const auto start = std::chrono::steady_clock::now();

  GenerationResult r;
  r.ledger = r.simulated = r.conventional = r.load_ledger = energy::Ledger(c.n_layers);
  r.prompt_tokens = static_cast<int>(prompt.size());
  SessionBackend cim(c, w, o.backends, hw.macro, hw.blocks, hw.tiles, hw.k_per_channel, hw.kv_window);

  // The evaluation, on its own backends: the same hardware (a macro's noise comes from its seed),
  // fresh caches per sequence, its events kept out of the generation's ledger, and the
  // generation's tokens (and read-noise draws) independent of the evaluation's size.
  if (!o.eval_text.empty()) {
    EvalCorpusOptions eo;
    eo.tokens = o.eval_tokens;
    eo.seed = o.eval_seed;
    eo.text = o.eval_text;
    const EvalCorpus corpus = build_eval_corpus(ck, tok, eo);
    auto make_cim = [&] { return std::make_unique<SessionBackend>(c, w, o.backends, hw.macro, hw.blocks, hw.tiles,
                                                            hw.k_per_channel, hw.kv_window); };
    r.evaluation = summarize_scores(score_corpus(c, w, make_cim, corpus, o.threads, o.eval_progress), o.bootstrap);
    r.evaluation->text_tokens = corpus.text_tokens;
    r.eval_prompts = eo.prompts;
  }

  // the CIM run, its shadow fed the same tokens, and a free-running reference
  ReferenceBackend shadow(c, w), free_ref(c, w);
  RunState s_cim(c), s_shadow(c), s_free(c);
  Sampler sample_cim(o.temperature, o.top_p, o.seed), sample_ref(o.temperature, o.top_p, o.seed);
  int token = prompt[0], ref_token = prompt[0];
  bool ref_done = false;
  // While the free-running reference has been fed the CIM run's tokens it is the shadow, float
  // for float, so it shares the shadow's pass; from the first token where they differ it runs on
  // its own, its cache taken from the shadow's (the same tokens at every earlier position).
  bool ref_shares_shadow = true;
  r.tokens.push_back(token);
  r.reference_tokens.push_back(ref_token);
  std::vector<int> printed{token}, ref_printed{ref_token};
  for (int pos = 0; pos < o.steps; ++pos) {
    const bool in_prompt = pos + 1 < static_cast<int>(prompt.size());
    // the float passes (shadow and free-running reference) need nothing from the CIM pass, so
    // with two threads they run beside it; the results do not depend on the thread count
    const Vector* ls = nullptr;
    const Vector* lf = nullptr;
    auto reference_passes = [&] {
      if (ref_shares_shadow && !ref_done && ref_token != token) {
        free_ref.cache().copy_from(shadow.cache());
        ref_shares_shadow = false;
      }
      ls = &forward(c, w, s_shadow, shadow, token, pos);
      if (!ref_done) lf = ref_shares_shadow ? ls : &forward(c, w, s_free, free_ref, ref_token, pos);
    };
    std::future<void> refs;
    if (o.threads > 1) refs = std::async(std::launch::async, reference_passes);
    const Vector& lc = forward(c, w, s_cim, cim, token, pos);
    if (o.threads > 1) refs.get(); else reference_passes();
    r.steps.push_back(compare_logits(*ls, lc, pos));
    if (hw.conventional) {
      const energy::Ledger conv = hw.conventional(pos);
      r.conventional += conv;
      // operations that ran on a reference backend cost what the conventional engine pays for
      // them; the chip-wide terms (other, chip) come from the CIM chip's own periphery below
      add_ops(r.ledger, conv, [&](energy::Op op) {
        return !on_cim(op, o.backends) && !chip_wide(op);
      });
    }
    if (hw.periphery)
      add_ops(r.ledger, hw.periphery(pos), [&](energy::Op op) {
        return on_cim(op, o.backends) || chip_wide(op);
      });
    ++r.forward_passes;
    const int next = in_prompt ? prompt[pos + 1] : sample_cim.sample(lc);
    if (!ref_done) {
      const int ref_next = in_prompt ? prompt[pos + 1] : sample_ref.sample(*lf);
      if (ref_next == kBos) {
        ref_done = true;
      } else {
        ref_printed.push_back(ref_next);
        ref_token = ref_next;
        if (pos + 1 < o.steps) r.reference_tokens.push_back(ref_next);
      }
    }
    if (o.progress) o.progress(pos + 1, o.steps);
    if (next == kBos) break;  // as run.c: BOS ends the story
    printed.push_back(next);
    token = next;
    if (pos + 1 < o.steps) r.tokens.push_back(next);
  }
  r.text = tok.decode_all(printed);
  r.reference_text = tok.decode_all(ref_printed);
  r.accuracy = summarize(r.steps);
  r.simulated = cim.ledger();
  r.ledger += r.simulated;
  r.load_ledger = cim.load_ledger();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kvcim::runtime
