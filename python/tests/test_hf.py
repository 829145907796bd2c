"""Hugging Face folders of every supported family (Llama, Llama-3.1's rope_scaling with
attention_bias and tied embeddings, Mistral's sliding window, Qwen2's biases, Qwen3's head_dim and
q/k norms), written by hand in F32, F16 and BF16, in one file or two shards (hf_folders.py: no
kvcim code), loaded with kvcim.Model.load(DIR) and compared with an independent numpy
implementation of transformers' forward pass of the family (rotate-half RoPE, repeat_kv GQA,
float64)."""
import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import kvcim
from hf_folders import FAMILIES, head_dim, hf_forward, write_folder

IDS = [1, 17, 254, 3, 99, 42, 42, 7, 280, 5, 11, 160, 2, 31, 64, 200]

# The reference without what makes the family itself: each must change the logits, so that the
# comparison would fail if kvcim left it out.
WITHOUT = {
    "llama": lambda c, w: (dict(c, rope_theta=10000.0), w),
    "llama3_scaled": lambda c, w: ({k: v for k, v in c.items() if k != "rope_scaling"}, w),
    "mistral": lambda c, w: (dict(c, sliding_window=None), w),
    "qwen2": lambda c, w: (c, {k: v for k, v in w.items() if not k.endswith(".bias")}),
    "qwen3": lambda c, w: (c, {k: (np.ones_like(v) if "q_norm" in k or "k_norm" in k else v) for k, v in w.items()}),
}


@pytest.mark.parametrize("dtype,sharded", [("BF16", False), ("BF16", True), ("F16", False), ("F16", True),
                                           ("F32", False), ("F32", True)])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_matches_numpy_hf_forward(tmp_path, family, dtype, sharded):
    cfg = FAMILIES[family]
    weights = write_folder(tmp_path / "ckpt", cfg, dtype, sharded)
    model = kvcim.Model.load(str(tmp_path / "ckpt"))
    c = model.config
    assert (c.dim, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len) == (
        cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["vocab_size"],
        cfg["max_position_embeddings"])
    assert c.head_dim() == head_dim(cfg)
    assert c.architecture == cfg["architectures"][0]
    assert c.rope_theta == cfg["rope_theta"] and c.rms_norm_eps == pytest.approx(cfg["rms_norm_eps"])
    assert c.shared_classifier == cfg["tie_word_embeddings"]
    got = model.logits(IDS)
    want = hf_forward(cfg, weights, IDS)
    assert got.shape == want.shape
    # float32 against float64, each row's error over its largest |logit|: measured 1.1e-7 to
    # 2.5e-7 (kvcim logits on each family, dtype and sharding); the bound the checkpoints promise
    err = np.abs(got - want).max(axis=1) / np.abs(want).max(axis=1)
    assert err.max() < 1e-5, err
    # what makes the family changes the logits well beyond that bound
    alt_cfg, alt_w = WITHOUT[family](cfg, weights)
    alt = hf_forward(alt_cfg, alt_w, IDS)
    assert (np.abs(alt - want).max(axis=1) / np.abs(want).max(axis=1)).max() > 1e-3
    # the positions matter (RoPE): the prediction after the repeated token differs
    assert np.abs(want[6] - want[5]).max() > 1e-2


def test_read_checkpoint_config_and_unsupported_architecture(tmp_path):
    write_folder(tmp_path / "ckpt", FAMILIES["qwen3"], "BF16", False)
    c = kvcim.read_checkpoint_config(str(tmp_path / "ckpt"))
    assert c.to_dict()["rope_theta"] == FAMILIES["qwen3"]["rope_theta"]
    assert (c.head_dim(), c.q_dim(), c.dim // c.n_heads) == (32, 128, 16)
    assert kvcim.Config.from_dict(c.to_dict()) == c and c.to_dict()["qk_norm"]
    (tmp_path / "ckpt" / "config.json").write_text(json.dumps({"architectures": ["GPT2LMHeadModel"]}))
    with pytest.raises(kvcim.Error, match="config.json: architectures = .*GPT2LMHeadModel.*supported: "
                                          "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM"):
        kvcim.Model.load(str(tmp_path / "ckpt"))


def test_byte_level_tokenizer_with_its_config(tmp_path):
    # Qwen's layout in miniature: byte-level BPE, added tokens matched in the text, no BOS
    # (tokenizer_config.json's bos_token null), EOS named there
    vocab = {"a": 0, "b": 1, "c": 2, "\u0120": 3, "ab": 5}
    tok = {"added_tokens": [{"id": 4, "content": "<|end|>", "special": True}],
           "normalizer": {"type": "NFC"},
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
           "post_processor": {"type": "ByteLevel"}, "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(tok))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"bos_token": None, "eos_token": "<|end|>"}))
    t = kvcim.Tokenizer.load(str(tmp_path))
    assert (t.bos_id, t.eos_id, t.pad_id) == (-1, 4, -1)
    ids = t.encode("ab c<|end|>", bos=True)
    assert ids == [5, 3, 2, 4]
    assert t.decode_text(ids) == "ab c"
    tok["normalizer"] = {"type": "NFKC"}
    (tmp_path / "tokenizer.json").write_text(json.dumps(tok))
    with pytest.raises(kvcim.Error, match="normalizer = NFKC: not supported"):
        kvcim.Tokenizer.load(str(tmp_path))


@pytest.mark.parametrize("family, vocab, want", [
    # Llama-3: its template adds <|begin_of_text|>; "Hello" is one piece
    ("llama3", 128256, [128000, 9906]),
    # Qwen3: no BOS; the model's embedding has 267 rows more than the tokenizer's ids
    ("qwen3", 151936, [9707, 11, 1879]),
])
def test_a_folder_runs_with_its_real_tokenizer(tmp_path, family, vocab, want):
    # a small random model of the family's vocabulary, the real tokenizer files beside it
    # (testdata/tokenizers, unpacked into the build folder); generate feeds what the tokenizer gives
    build = pathlib.Path(os.environ.get("KVCIM_EXE") or pathlib.Path(kvcim.__file__).resolve().parents[2] / "kvcim").parent
    base = FAMILIES["llama" if family == "llama3" else "qwen3"]
    cfg = dict(base, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
               num_key_value_heads=1, vocab_size=vocab)
    if "head_dim" in cfg:
        cfg["head_dim"] = 8
    folder = tmp_path / family
    write_folder(folder, cfg, "BF16", False)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(build / "testdata" / "tokenizers" / family / f, folder / f)
    prompt = "Hello" if family == "llama3" else "Hello, world"
    out = subprocess.run([str(build / "kvcim"), "generate", "--model", str(folder), "--prompt", prompt,
                          "--steps", str(len(want) + 2), "--temperature", "0", "--ids"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    ids = [int(x) for x in out.stdout.strip().split(",")]
    assert ids[:len(want)] == want
    assert all(0 <= i < vocab for i in ids)
