"""Hugging Face checkpoint folders written by hand, and transformers' forward pass of each family
written out in numpy, for the tests (python/tests/test_hf*.py, testbench/cli/hf_architectures.sh).

Nothing here goes through kvcim: config.json and the safetensors files (8-byte header length, JSON
header, raw little-endian data; F32, F16 or BF16; one file, or two shards named by
model.safetensors.index.json) are written from the tensors' bytes, and `hf_forward` computes the
logits in the Hugging Face layout (rotate-half RoPE, repeat_kv GQA) in float64, as
transformers' modeling_llama / modeling_mistral / modeling_qwen2 / modeling_qwen3 do.

Run as a script to write one folder:
  python3 hf_folders.py FAMILY DTYPE OUT_DIR [--sharded] [key=value ...]
(key=value: config.json fields to change, as JSON values, e.g. vocab_size=512)
"""
import json
import math
import struct
import sys

import numpy as np

# Each family's config.json at test size; every key is transformers' own. head_dim is stated only
# where it differs from hidden_size / num_attention_heads (Qwen3's 32 over 64 / 4 = 16).
BASE = {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": 300, "max_position_embeddings": 32, "rope_theta": 500000.0,
        "rms_norm_eps": 1e-6, "tie_word_embeddings": False, "hidden_act": "silu"}
FAMILIES = {
    # Llama-3 style: GQA 2:1, rope_theta 5e5, untied
    "llama": dict(BASE, architectures=["LlamaForCausalLM"], model_type="llama"),
    # Llama-3.1's rope_scaling (every regime of its rewrite at head_dim 16: rope_theta 1e4 gives
    # wavelengths 6.3 (kept), 20 and 63 (interpolated), 199 and up (divided by factor)); tied,
    # attention_bias (q, k, v and o)
    "llama3_scaled": dict(BASE, architectures=["LlamaForCausalLM"], model_type="llama", rope_theta=10000.0,
                          tie_word_embeddings=True, attention_bias=True,
                          rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                        "high_freq_factor": 4.0, "original_max_position_embeddings": 64}),
    # Mistral: a sliding window of 5 positions (the tests feed 16)
    "mistral": dict(BASE, architectures=["MistralForCausalLM"], model_type="mistral", sliding_window=5,
                    rope_theta=1000000.0),
    # Qwen2: q, k, v biases; tied; use_sliding_window false as its configs say
    "qwen2": dict(BASE, architectures=["Qwen2ForCausalLM"], model_type="qwen2", tie_word_embeddings=True,
                  use_sliding_window=False, sliding_window=4, max_window_layers=2, rope_theta=1000000.0),
    # Qwen3: head_dim 32 apart from 64 / 4, q_norm / k_norm, tied
    "qwen3": dict(BASE, architectures=["Qwen3ForCausalLM"], model_type="qwen3", head_dim=32,
                  tie_word_embeddings=True, attention_bias=False, use_sliding_window=False,
                  rope_theta=1000000.0),
}
TORCH_DTYPE = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}


def head_dim(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def biases(cfg):
    """(q/k/v biases, o bias) as the family's attention has them."""
    if cfg["model_type"] == "qwen2":
        return True, False
    if cfg["model_type"] in ("llama", "qwen3"):
        return cfg.get("attention_bias", False), cfg.get("attention_bias", False)
    return False, False


def tensor_shapes(cfg):
    d, hid, hd = cfg["hidden_size"], cfg["intermediate_size"], head_dim(cfg)
    q, kv, vocab = cfg["num_attention_heads"] * hd, cfg["num_key_value_heads"] * hd, cfg["vocab_size"]
    qkv_bias, o_bias = biases(cfg)
    shapes = {"model.embed_tokens.weight": (vocab, d), "model.norm.weight": (d,)}
    if not cfg["tie_word_embeddings"]:
        shapes["lm_head.weight"] = (vocab, d)
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        shapes.update({p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                       p + "self_attn.q_proj.weight": (q, d), p + "self_attn.k_proj.weight": (kv, d),
                       p + "self_attn.v_proj.weight": (kv, d), p + "self_attn.o_proj.weight": (d, q),
                       p + "mlp.gate_proj.weight": (hid, d), p + "mlp.up_proj.weight": (hid, d),
                       p + "mlp.down_proj.weight": (d, hid)})
        if qkv_bias:
            shapes.update({p + "self_attn.q_proj.bias": (q,), p + "self_attn.k_proj.bias": (kv,),
                           p + "self_attn.v_proj.bias": (kv,)})
        if o_bias:
            shapes[p + "self_attn.o_proj.bias"] = (d,)
        if cfg["model_type"] == "qwen3":
            shapes.update({p + "self_attn.q_norm.weight": (hd,), p + "self_attn.k_norm.weight": (hd,)})
    return shapes


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
    t = a.astype("<f2" if dtype == "F16" else "<f4")
    return t.tobytes(), t.astype(np.float64)


def write_safetensors(path, tensors, dtype):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, raw, shape in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def random_values(rng, name, shape, dim):
    if name.endswith("norm.weight"):
        return rng.uniform(0.8, 1.2, shape)
    if name.endswith(".bias"):
        return rng.uniform(-0.5, 0.5, shape)
    a = rng.uniform(-1, 1, shape) / np.sqrt(shape[1])
    return a * np.sqrt(dim) if "embed" in name else a


def write_folder(folder, cfg, dtype, sharded, seed=1):
    """Writes config.json and the tensors of `cfg` (random, seeded) into the new folder; returns
    the tensors as float64, as stored (rounded to `dtype`)."""
    rng = np.random.default_rng(seed)
    weights, files = {}, {}
    for name, shape in tensor_shapes(cfg).items():
        a = random_values(rng, name, shape, cfg["hidden_size"])
        raw, weights[name] = encode(a.astype(np.float32), dtype)
        shard = "model.safetensors"
        if sharded:
            shard = "model-00002-of-00002.safetensors" if ".layers.1." in name else "model-00001-of-00002.safetensors"
        files.setdefault(shard, []).append((name, raw, shape))
    folder.mkdir()
    for shard, tensors in files.items():
        write_safetensors(folder / shard, tensors, dtype)
    if sharded:
        (folder / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {}, "weight_map": {n: s for s, ts in files.items() for n, _, _ in ts}}))
    (folder / "config.json").write_text(json.dumps(dict(cfg, torch_dtype=TORCH_DTYPE[dtype])))
    return weights


def inv_freq(cfg):
    """transformers' _compute_default_rope_parameters, and _compute_llama3_parameters when
    rope_scaling says llama3."""
    hd = head_dim(cfg)
    inv = 1.0 / (cfg["rope_theta"] ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    rs = cfg.get("rope_scaling")
    if not rs:
        return inv
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv
    scaled = np.where(wavelen > old / low, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < old / high) & ~(wavelen > old / low)
    return np.where(medium, smoothed, scaled)


def hf_forward(cfg, w, ids):
    """The family's forward pass over `ids` (all positions), float64: logits [len(ids), vocab]."""
    n, hd, eps = len(ids), head_dim(cfg), cfg["rms_norm_eps"]
    heads, kv_heads = cfg["num_attention_heads"], cfg["num_key_value_heads"]

    def rmsnorm(x, weight):
        return weight * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))

    def rotate_half(x):
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        return np.concatenate([-x2, x1], axis=-1)

    def project(h, name, heads_):
        y = h @ w[name + ".weight"].T
        if name + ".bias" in w:
            y = y + w[name + ".bias"]
        return y.reshape(n, heads_, hd).transpose(1, 0, 2)

    freqs = np.outer(np.arange(n), inv_freq(cfg))
    emb = np.concatenate([freqs, freqs], axis=-1)          # [n, hd]
    cos, sin = np.cos(emb)[None], np.sin(emb)[None]          # [1, n, hd]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    visible = j <= i
    window = cfg.get("sliding_window") if cfg["model_type"] == "mistral" else None
    if window:
        visible &= i - j < window                             # transformers' sliding-window mask
    mask = np.where(visible, 0.0, -np.inf)
    x = w["model.embed_tokens.weight"][ids]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rmsnorm(x, w[p + "input_layernorm.weight"])
        q = project(h, p + "self_attn.q_proj", heads)
        k = project(h, p + "self_attn.k_proj", kv_heads)
        v = project(h, p + "self_attn.v_proj", kv_heads)
        if cfg["model_type"] == "qwen3":                      # Qwen3RMSNorm over each head, before RoPE
            q = rmsnorm(q, w[p + "self_attn.q_norm.weight"])
            k = rmsnorm(k, w[p + "self_attn.k_norm.weight"])
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = np.repeat(k, heads // kv_heads, axis=0)          # repeat_kv
        v = np.repeat(v, heads // kv_heads, axis=0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd) + mask
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        s /= s.sum(axis=-1, keepdims=True)
        a = (s @ v).transpose(1, 0, 2).reshape(n, heads * hd)
        o = a @ w[p + "self_attn.o_proj.weight"].T
        if p + "self_attn.o_proj.bias" in w:
            o = o + w[p + "self_attn.o_proj.bias"]
        x = x + o
        h = rmsnorm(x, w[p + "post_attention_layernorm.weight"])
        g = h @ w[p + "mlp.gate_proj.weight"].T
        x = x + ((g / (1 + np.exp(-g))) * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
    classifier = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return rmsnorm(x, w["model.norm.weight"]) @ classifier.T


if __name__ == "__main__":
    import pathlib
    family, dtype, out = sys.argv[1:4]
    changes = dict(a.split("=", 1) for a in sys.argv[4:] if "=" in a)
    cfg = dict(FAMILIES[family], **{k: json.loads(v) for k, v in changes.items()})
    write_folder(pathlib.Path(out), cfg, dtype, "--sharded" in sys.argv[4:])
