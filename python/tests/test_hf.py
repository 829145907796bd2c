"""A random Llama-3-style checkpoint (GQA 4:1, rope_theta 500000, rms_norm_eps 1e-6, a separate
classifier, bf16 or fp16 tensors, one file or two shards) written in Hugging Face's layout by hand
(8-byte header length, JSON header, raw data), loaded with kvcim.Model.load(DIR), against an
independent numpy implementation of transformers' modeling_llama forward pass (rotate-half RoPE,
repeat_kv GQA, float64)."""
import json
import os
import pathlib
import struct

import numpy as np
import pytest

import kvcim

DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, VOCAB, SEQ = 64, 96, 2, 8, 2, 300, 32
THETA, EPS = 500000.0, 1e-6
HD = DIM // HEADS


def to_bf16_bits(a):
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def encode(a, dtype):
    """(raw little-endian bytes, the float64 values they hold)"""
    if dtype == "BF16":
        bits = to_bf16_bits(a)
        return bits.astype("<u2").tobytes(), from_bf16_bits(bits).astype(np.float64)
    h = a.astype("<f2")
    return h.tobytes(), h.astype(np.float64)


def write_safetensors(path, tensors, dtype):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, raw, shape in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def random_checkpoint(folder, dtype, sharded, seed=1):
    rng = np.random.default_rng(seed)
    shapes = {"model.embed_tokens.weight": (VOCAB, DIM), "model.norm.weight": (DIM,),
              "lm_head.weight": (VOCAB, DIM)}
    for l in range(LAYERS):
        p = f"model.layers.{l}."
        shapes.update({p + "input_layernorm.weight": (DIM,), p + "post_attention_layernorm.weight": (DIM,),
                       p + "self_attn.q_proj.weight": (HEADS * HD, DIM), p + "self_attn.k_proj.weight": (KV_HEADS * HD, DIM),
                       p + "self_attn.v_proj.weight": (KV_HEADS * HD, DIM), p + "self_attn.o_proj.weight": (DIM, HEADS * HD),
                       p + "mlp.gate_proj.weight": (HIDDEN, DIM), p + "mlp.up_proj.weight": (HIDDEN, DIM),
                       p + "mlp.down_proj.weight": (DIM, HIDDEN)})
    weights, files = {}, {}
    for name, shape in shapes.items():
        if len(shape) == 1:
            a = rng.uniform(0.8, 1.2, shape)
        else:
            a = rng.uniform(-1, 1, shape) / np.sqrt(shape[1]) * (np.sqrt(DIM) if "embed" in name else 1)
        raw, weights[name] = encode(a.astype(np.float32), dtype)
        shard = "model-00002-of-00002.safetensors" if sharded and ".layers.1." in name else \
                "model-00001-of-00002.safetensors" if sharded else "model.safetensors"
        files.setdefault(shard, []).append((name, raw, shape))
    folder.mkdir()
    for shard, tensors in files.items():
        write_safetensors(folder / shard, tensors, dtype)
    if sharded:
        (folder / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {}, "weight_map": {n: s for s, ts in files.items() for n, _, _ in ts}}))
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": DIM,
        "intermediate_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS, "vocab_size": VOCAB, "max_position_embeddings": SEQ,
        "rope_theta": THETA, "rms_norm_eps": EPS, "tie_word_embeddings": False, "hidden_act": "silu",
        "torch_dtype": "bfloat16" if dtype == "BF16" else "float16"}))
    return weights


def hf_llama_forward(w, ids):
    """transformers' LlamaForCausalLM forward, written out in numpy (float64), all positions."""
    n = len(ids)

    def rmsnorm(x, weight):
        return weight * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS))

    def rotate_half(x):
        x1, x2 = x[..., : HD // 2], x[..., HD // 2:]
        return np.concatenate([-x2, x1], axis=-1)

    inv_freq = 1.0 / (THETA ** (np.arange(0, HD, 2, dtype=np.float64) / HD))
    freqs = np.outer(np.arange(n), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)          # [n, HD]
    cos, sin = np.cos(emb)[None], np.sin(emb)[None]          # [1, n, HD]
    causal = np.triu(np.full((n, n), -np.inf), 1)
    x = w["model.embed_tokens.weight"][ids]
    for l in range(LAYERS):
        p = f"model.layers.{l}."
        h = rmsnorm(x, w[p + "input_layernorm.weight"])
        q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(n, HEADS, HD).transpose(1, 0, 2)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(n, KV_HEADS, HD).transpose(1, 0, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(n, KV_HEADS, HD).transpose(1, 0, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = np.repeat(k, HEADS // KV_HEADS, axis=0)          # repeat_kv
        v = np.repeat(v, HEADS // KV_HEADS, axis=0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(HD) + causal
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        s /= s.sum(axis=-1, keepdims=True)
        a = (s @ v).transpose(1, 0, 2).reshape(n, DIM)
        x = x + a @ w[p + "self_attn.o_proj.weight"].T
        h = rmsnorm(x, w[p + "post_attention_layernorm.weight"])
        g = h @ w[p + "mlp.gate_proj.weight"].T
        x = x + ((g / (1 + np.exp(-g))) * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
    return rmsnorm(x, w["model.norm.weight"]) @ w["lm_head.weight"].T


@pytest.mark.parametrize("dtype,sharded", [("BF16", False), ("F16", True)])
def test_random_llama3_style_checkpoint_matches_numpy_hf_forward(tmp_path, dtype, sharded):
    weights = random_checkpoint(tmp_path / "ckpt", dtype, sharded)
    model = kvcim.Model.load(str(tmp_path / "ckpt"))
    c = model.config
    assert (c.dim, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len) == (DIM, HEADS, KV_HEADS, VOCAB, SEQ)
    assert c.rope_theta == THETA and c.rms_norm_eps == pytest.approx(EPS)
    assert not c.shared_classifier
    ids = [1, 17, 254, 3, 99, 42, 42, 7, 280, 5, 11, 160, 2, 31, 64, 200]
    got = model.logits(ids)
    want = hf_llama_forward(weights, ids)
    assert got.shape == want.shape
    # float32 against float64: measured 1.8e-7 of each row's max |logit|; 10x margin
    err = np.abs(got - want).max(axis=1) / np.abs(want).max(axis=1)
    assert err.max() < 2e-6, err
    # the positions matter (RoPE): the prediction after the repeated token differs
    assert np.abs(want[6] - want[5]).max() > 1e-2


def test_read_checkpoint_config_and_tokenizer_of_a_folder(tmp_path):
    random_checkpoint(tmp_path / "ckpt", "BF16", False)
    c = kvcim.read_checkpoint_config(str(tmp_path / "ckpt"))
    assert c.to_dict()["rope_theta"] == THETA
    (tmp_path / "ckpt" / "config.json").write_text(json.dumps({"architectures": ["GPT2LMHeadModel"]}))
    with pytest.raises(kvcim.Error, match="config.json: architectures"):
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
def test_a_folder_runs_with_its_real_tokenizer(tmp_path, monkeypatch, family, vocab, want):
    # a small random model of the family's vocabulary, the real tokenizer files beside it
    # (testdata/tokenizers, unpacked into the build folder); generate feeds what the tokenizer gives
    import shutil
    import subprocess
    build = pathlib.Path(os.environ.get("KVCIM_EXE") or pathlib.Path(kvcim.__file__).resolve().parents[2] / "kvcim").parent
    for name, value in {"DIM": 16, "HIDDEN": 32, "LAYERS": 1, "HEADS": 2, "KV_HEADS": 1, "HD": 8, "VOCAB": vocab}.items():
        monkeypatch.setitem(globals(), name, value)
    folder = tmp_path / family
    random_checkpoint(folder, "BF16", False)
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
