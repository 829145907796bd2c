#!/usr/bin/env python3
"""Writes the small seed inputs of testbench/fuzz/corpus/<target>/ (committed; rerun only to
regenerate them). Crash reproducers found by fuzzing are committed beside the seeds by hand, named
regress-<what>.<ext>, and are not touched here."""
import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(ROOT))


def put(target, name, data):
    d = os.path.join(ROOT, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def checkpoint(dim, hidden, layers, heads, kv_heads, vocab, seq, shared=True, fill=0.01):
    hd = dim // heads
    kv = hd * kv_heads
    n = vocab * dim + layers * (dim + dim * dim + 2 * kv * dim + dim * dim + dim + 3 * hidden * dim)
    n += dim + seq * hd + (0 if shared else vocab * dim)
    header = struct.pack("<7i", dim, hidden, layers, heads, kv_heads, vocab if shared else -vocab, seq)
    floats = struct.pack("<%df" % n, *[fill * ((i % 7) - 3) for i in range(n)])
    return header + floats


def tokenizer(extra=(), max_len=8):
    entries = [(0.0, b"<unk>"), (0.0, b"<s>"), (0.0, b"</s>")]
    entries += [(0.0, b"<0x%02X>" % b) for b in range(256)]
    entries += list(extra)
    out = struct.pack("<i", max_len)
    for score, piece in entries:
        out += struct.pack("<fi", score, len(piece)) + piece
    return out


def tok_input(text, file_bytes):
    return struct.pack("<H", len(text)) + text + file_bytes


def npy(shape, version=1, descr="<f4", values=None):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    lenbytes = 2 if version == 1 else 4
    pad = (64 - (6 + 2 + lenbytes + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    count = 1
    for d in shape:
        count *= d
    values = values if values is not None else [float(i) for i in range(count)]
    return (b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<H" if version == 1 else "<I", len(header))
            + header.encode() + struct.pack("<%df" % len(values), *values))


def main():
    # checkpoint: tiny valid shapes (MHA, GQA, separate classifier) and a few broken ones
    put("checkpoint", "mha_shared.bin", checkpoint(2, 3, 1, 1, 1, 4, 2))
    put("checkpoint", "gqa_separate.bin", checkpoint(4, 3, 2, 2, 1, 5, 3, shared=False))
    put("checkpoint", "large_weights.bin", checkpoint(2, 2, 1, 1, 1, 3, 2, fill=1e30))
    put("checkpoint", "header_only.bin", struct.pack("<7i", 2, 3, 1, 1, 1, 4, 2))
    put("checkpoint", "truncated.bin", checkpoint(2, 3, 1, 1, 1, 4, 2)[:-5])
    # regression: finite weights whose activations overflow to NaN logits (the sampler once read
    # element SIZE_MAX of an empty top-p list)
    put("checkpoint", "regress-overflowing-activations.bin", checkpoint(4, 3, 1, 2, 1, 5, 2, fill=1e10))
    put("checkpoint", "overflow.bin", struct.pack("<7i", 1 << 24, 1 << 24, 1 << 24, 1 << 22, 1 << 22, 1 << 24, 1 << 24))

    # tokenizer: [u16 text length][text][tokenizer file]
    merges = [(1.0, b" "), (2.0, b"a"), (3.0, b" a"), (4.0, b"ab"), (5.0, b" ab"), (0.5, b"\xc3\xa9")]
    put("tokenizer", "minimal.bin", tok_input(b"ab a\xc3\xa9", tokenizer(merges)))
    put("tokenizer", "bytes_only.bin", tok_input(b"\xff\xfe abc", tokenizer()))
    put("tokenizer", "truncated.bin", tok_input(b"a", tokenizer(merges)[:-3]))
    put("tokenizer", "huge_length.bin", tok_input(b"", struct.pack("<ifi", 8, 0.0, 1 << 30)))

    # encode: texts for the embedded vocabulary, valid UTF-8 and not
    texts = {
        "ascii.txt": b"Once upon a time, Lily and Tom went to the park.",
        "utf8.txt": "caf\u00e9 \u2603 \U0001F600 na\u00efve".encode(),
        "invalid_utf8.txt": b"\xff\xfe\xc3(\xa0\xa1\xe2\x28\xa1\xf0\x90\x28\xbc\xc0\xaf\xed\xa0\x80",
        "truncated_utf8.txt": b"abc \xe2\x98",
        "byte_piece_text.txt": b"<0x41> <s> </s> <unk>",
        "controls.txt": b"\x00\x01\n\t\r \x7f",
    }
    for name, t in texts.items():
        put("encode", name, t)

    # tech_table: the shipped 45 nm table (complete, no base:) and small broken variants
    base = open(os.path.join(SRC, "configs", "tech", "digital_45nm.yaml"), "rb").read()
    put("tech_table", "digital_45nm.yaml", base)
    put("tech_table", "unknown_key.yaml", b"name: x\nevnets: {}\n")
    put("tech_table", "wrong_unit.yaml",
        b"name: x\nevents:\n  adder_op:\n    energy_pj: {value: 3 ns, source: \"[H1] x\"}\n"
        b"    latency_ns: {value: 1, assumption: \"a sentence of reasoning here\"}\n")
    put("tech_table", "base_missing.yaml", b"name: x\nbase: nothere.yaml\n")
    put("tech_table", "flow.yaml", b"{name: t, cell: {endurance_writes: {value: unlimited, source: '[M1]'}}}\n")

    # hw_spec: the shipped specs (technology paths resolve against configs/hw), JSON, broken ones
    for name in ("sram_digital", "sram_analog", "reram_analog", "wafer_scale"):
        put("hw_spec", name + ".yaml", open(os.path.join(SRC, "configs", "hw", name + ".yaml"), "rb").read())
    put("hw_spec", "link_without_bandwidth.yaml", b"name: x\ndie: {reticle_mm2: 100, wafer_scale: true}\n"
        b"link: {energy_pj_per_bit: 0.5}\n")
    put("hw_spec", "json.yaml", b'{"name": "j", "technology": "../tech/sram_digital_cim.yaml", '
        b'"macro": {"kind": "digital", "rows": 64, "cols": 64}, "organization": {"macros": 4}}')
    put("hw_spec", "unknown_key.yaml", b"name: x\nmacro: {rowz: 3}\n")
    put("hw_spec", "duplicate.yaml", b"name: x\nname: y\n")
    analog = open(os.path.join(SRC, "configs", "hw", "sram_analog.yaml"), "rb").read()
    merged = analog.replace(b"  kind: analog", b"  kind: analog_merged")
    put("hw_spec", "merged.yaml", merged)
    put("hw_spec", "merged_one_bit_adc.yaml", merged.replace(b"  adc_bits: 8", b"  adc_bits: 1"))

    # policy: text of every key, a mapping by field names and by short words, broken ones
    put("policy", "every_key.txt", b"overflow=window,page=16,kv_fraction=0.25,gqa_sharing=off,replicas=2,"
        b"sequences=3,window=64,sinks=8,evict=h2o")
    put("policy", "fit.txt", b"window=fit")
    put("policy", "token_window.txt", b"window=32,sinks=4,evict=h2o,granularity=token,recent=8")
    put("policy", "bare.txt", b"spill")
    put("policy", "names.json", b'{"tokens_per_page": 16, "window_tokens": 64, "sink_tokens": 8, '
        b'"kv_fraction": null, "gqa_sharing": true, "evict": "h2o"}')
    put("policy", "aliases.json", b'{"page": "tile", "window": "fit", "kv_fraction": "auto", "replicas": "2"}')
    put("policy", "unknown.txt", b"overflw=spill,page=")
    put("policy", "not_a_mapping.json", b"[1, 2]")

    # macro_file: the shipped macro specs (configs/macros) and broken ones
    for name in ("jia_jssc20", "yao_esserc24", "wei_tdcim_sscl25", "zz_dimc1_isscc22", "C9", "C11", "C1"):
        put("macro_file", name + ".yaml", open(os.path.join(SRC, "configs", "macros", name + ".yaml"), "rb").read())
    jia = open(os.path.join(SRC, "configs", "macros", "jia_jssc20.yaml"), "rb").read()
    put("macro_file", "no_published.yaml", jia[:jia.index(b"published:")])
    put("macro_file", "vdd_out_of_range.yaml", jia.replace(b"  vdd_v: 0.85", b"  vdd_v: 0.5"))
    put("macro_file", "unknown_readout.yaml", jia.replace(b"  readout: sar", b"  readout: flash"))
    put("macro_file", "bad_breakdown.yaml", jia.replace(b"    readout: 0.1558", b"    readout+array: 0.1558"))
    put("macro_file", "flow.yaml", b"{macro: {node_nm: 28, vdd_v: 0.9}, name: x}\n")

    # machine_file: the shipped machines and broken ones
    for name in ("a100-80gb", "h100-sxm"):
        put("machine_file", name + ".yaml", open(os.path.join(SRC, "configs", "machines", name + ".yaml"), "rb").read())
    h100 = open(os.path.join(SRC, "configs", "machines", "h100-sxm.yaml"), "rb").read()
    put("machine_file", "tiny_hbm.yaml", h100.replace(b"{value: 80, source:", b"{value: 0.001, source:"))
    put("machine_file", "no_source.yaml", h100.replace(b"{value: 700, source: ", b"{value: 700, x: "))
    put("machine_file", "flow.yaml", b"{name: m, node_nm: {value: 5, source: a sentence of a source}}\n")
    # sram_nodes: the shipped table and broken ones
    sram = open(os.path.join(SRC, "configs", "memory", "sram_nodes.yaml"), "rb").read()
    put("sram_nodes", "shipped.yaml", sram)
    put("sram_nodes", "unsorted.yaml", sram.replace(b"node_nm: 28", b"node_nm: 50"))
    put("sram_nodes", "too_dense.yaml", sram.replace(b"{value: 31.8,", b"{value: 90,"))
    put("sram_nodes", "negative_read.yaml", sram.replace(b"{value: 0.1953125, source", b"{value: -0.19, source"))
    put("sram_nodes", "no_largest_access.yaml", b"\n".join(l for l in sram.split(b"\n") if b"read_pj_per_bit: {value: 0.15625" not in l))
    put("sram_nodes", "one_node.yaml", b"nodes:\n  - {node_nm: 5, bitcell_um2: {value: 0.021, source: a sentence of a source}, macro_mb_per_mm2: {value: 31.8, source: a sentence of a source}}\n")
    # macro_model: the shipped constants and broken ones
    consts = open(os.path.join(SRC, "configs", "macro_model.yaml"), "rb").read()
    put("macro_model", "shipped.yaml", consts)
    put("macro_model", "out_of_range.yaml", consts.replace(b"k_sar_ff: {value: ", b"k_sar_ff: {value: 5", 1))
    put("macro_model", "no_source.yaml", consts.replace(b"r_dff: {value: 1.5, source:", b"r_dff: {value: 1.5, sauce:"))
    put("macro_model", "missing.yaml", b"\n".join(l for l in consts.split(b"\n") if not l.startswith(b"  k_tdc_ff")))
    put("macro_model", "flow.yaml", b"{held_out_median_error: 0.1, held_out_worst_error: 1, constants: {c_wl_ff: {value: 0.3, source: a sentence of a source}}}\n")

    # rtl_recipe: a recipe as rtl/rtl_recipe.cmake writes one (generic paths), and broken ones
    recipe = {"verilator": "/usr/bin/verilator", "verilator_version": "5.006", "cxx": "/usr/bin/c++",
              "ar": "/usr/bin/ar", "sv_sources": ["/src/rtl/cim_macro.sv"], "verilator_args": ["-O3"],
              "tile_sources": ["/src/rtl/sim/rtl_tile.cpp"], "module_sources": ["/src/rtl/sim/rtl_module.cpp"],
              "cxx_flags": ["-O1"], "defines": ["KVCIM_HAVE_RTL=1"], "include_dirs": ["/src/include"],
              "archive": ["/build/libkvcim_cmodel.a"], "libs": ["-lpthread"], "link_flags": ["-shared"],
              "hash_dirs": ["/src/include"]}
    put("rtl_recipe", "recipe.json", json.dumps(recipe, indent=1).encode())
    put("rtl_recipe", "missing_key.json", json.dumps({k: v for k, v in recipe.items() if k != "cxx"}).encode())
    put("rtl_recipe", "wrong_type.json", json.dumps(dict(recipe, sv_sources="one.sv")).encode())
    put("rtl_recipe", "not_json.json", b'{"verilator": ')

    # npy: valid v1/v2 arrays and broken headers
    put("npy", "v1_2x3.npy", npy([2, 3]))
    put("npy", "v2_4.npy", npy([4], version=2))
    put("npy", "scalar.npy", npy([]))
    put("npy", "huge_shape.npy", npy([1 << 30], values=[1.0]))
    put("npy", "f8.npy", npy([2], descr="<f8"))
    put("npy", "bad_dim.npy", npy([2], values=[1.0, 2.0]).replace(b"(2,)", b"(x,)"))

    # Hugging Face: safetensors files, config.json, tokenizer.json
    def safetensors(header, data=b""):
        text = json.dumps(header).encode()
        return struct.pack("<Q", len(text)) + text + data
    put("safetensors", "two.safetensors", safetensors(
        {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
         "b": {"dtype": "BF16", "shape": [1, 2], "data_offsets": [8, 12]},
         "__metadata__": {"format": "pt"}}, struct.pack("<2f", 1.0, -2.0) + b"\x80\x3f\x00\x40"))
    put("safetensors", "f16.safetensors", safetensors({"h": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}}, b"\x00\x3c\x00\x7c"))
    put("safetensors", "overlap.safetensors", safetensors(
        {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
         "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8)))
    put("safetensors", "long_header.safetensors", struct.pack("<Q", 1 << 40) + b"{}")
    put("safetensors", "f64.safetensors", safetensors({"d": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}}, bytes(8)))
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "intermediate_size": 172, "num_hidden_layers": 5, "num_attention_heads": 8,
              "num_key_value_heads": 4, "vocab_size": 512, "max_position_embeddings": 512,
              "rope_theta": 10000.0, "rms_norm_eps": 1e-05, "tie_word_embeddings": True}
    put("hf_config", "stories260K.json", json.dumps(config, indent=1).encode())
    put("hf_config", "llama3.json", json.dumps(dict(config, rope_theta=500000.0, rms_norm_eps=1e-6,
                                                    tie_word_embeddings=False, num_key_value_heads=2)).encode())
    put("hf_config", "mistral.json", json.dumps(dict(config, architectures=["MistralForCausalLM"])).encode())
    put("hf_config", "missing.json", b'{"model_type": "llama", "hidden_size": 64}')
    put("hf_config", "mistral_window.json", json.dumps(dict(config, architectures=["MistralForCausalLM"],
                                                            model_type="mistral", sliding_window=128)).encode())
    put("hf_config", "qwen2.json", json.dumps(dict(config, architectures=["Qwen2ForCausalLM"], model_type="qwen2",
                                                   use_sliding_window=False, sliding_window=4096)).encode())
    put("hf_config", "qwen3.json", json.dumps(dict(config, architectures=["Qwen3ForCausalLM"], model_type="qwen3",
                                                   head_dim=128, attention_bias=False)).encode())
    put("hf_config", "llama31.json", json.dumps(dict(config, rope_scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192})).encode())
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<0xE2>": 3, "<0x82>": 4, "<0xAC>": 5, "\u2581": 6,
             "h": 7, "i": 8, "\u2581h": 9, "\u2581hi": 10}
    tok = {"added_tokens": [{"id": i, "content": c, "special": True} for c, i in list(vocab.items())[:3]],
           "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                          {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
           "pre_tokenizer": None,
           "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True,
                     "vocab": vocab, "merges": ["\u2581 h", "\u2581h i"]}}
    put("hf_tokenizer", "llama2.bin", tok_input("hi \u20ac hi".encode(), json.dumps(tok).encode()))
    meta = dict(tok, normalizer=None, pre_tokenizer={"type": "Metaspace", "replacement": "\u2581",
                                                     "prepend_scheme": "first", "split": True})
    meta["model"] = dict(tok["model"], merges=[["\u2581", "h"], ["\u2581h", "i"]])
    put("hf_tokenizer", "metaspace.bin", tok_input(b" hi hi", json.dumps(meta).encode()))
    put("hf_tokenizer", "wrong_type.bin", tok_input(b"hi", json.dumps(dict(tok, normalizer={"type": 5})).encode()))
    put("hf_tokenizer", "unigram.bin", tok_input(b"x", json.dumps(dict(tok, model=dict(tok["model"], type="Unigram"))).encode()))
    put("hf_tokenizer", "no_unk.bin", tok_input(b"xyz", json.dumps(dict(tok, model=dict(tok["model"], unk_token=None, byte_fallback=False))).encode()))
    # byte-level BPE (Llama-3's / Qwen's layout): GPT-2's byte alphabet, a Split regex, added tokens
    def gpt2_char(b):
        keep = list(range(33, 127)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
        return chr(b) if b in keep else chr(256 + [x for x in range(256) if x not in keep].index(b))
    bl_vocab = {gpt2_char(b): b for b in range(256)}
    bl_vocab.update({"he": 256, "ll": 257, "hell": 258, gpt2_char(32) + "w": 259})
    split = {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
                                                   "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
             "behavior": "Isolated", "invert": False}
    bl = {"added_tokens": [{"id": 260, "content": "<|begin_of_text|>", "special": True},
                           {"id": 261, "content": "<think>", "special": False, "lstrip": True, "rstrip": True}],
          "normalizer": {"type": "NFC"},
          "pre_tokenizer": {"type": "Sequence", "pretokenizers": [split, {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]},
          "post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"}, {"type": "TemplateProcessing",
              "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
              "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [260], "tokens": ["<|begin_of_text|>"]}}}]},
          "decoder": {"type": "ByteLevel"},
          "model": {"type": "BPE", "ignore_merges": True, "vocab": bl_vocab, "merges": ["h e", "l l", "he ll", gpt2_char(32) + " w"]}}
    put("hf_tokenizer", "byte_level.bin", tok_input("hello <think> world's 12345\n\n  e\u0301 \xff".encode("utf-8", "surrogateescape"),
                                                    json.dumps(bl).encode()))
    put("hf_tokenizer", "gpt2_regex.bin", tok_input(b"it's 2024!  ok", json.dumps(dict(bl, pre_tokenizer={"type": "ByteLevel", "add_prefix_space": True})).encode()))
    put("hf_tokenizer", "lookahead.bin", tok_input(b"a  b   ", json.dumps(dict(bl, pre_tokenizer={"type": "Sequence", "pretokenizers": [
        dict(split, pattern={"Regex": "\\s+(?=\\S)|(?!x).{1,2}?|[^a-c\\]]+"}), {"type": "ByteLevel", "use_regex": False}]})).encode()))


if __name__ == "__main__":
    sys.exit(main())
