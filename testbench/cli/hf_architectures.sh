#!/usr/bin/env bash
# Hugging Face folders of each family (python/tests/hf_folders.py writes them by hand) through the
# kvcim command: `kvcim run` on a Qwen3 folder (head_dim 32 apart from 64 / 4, q/k norms) with the
# default hardware, its KV sizes following head_dim; `kvcim convert` both ways where llama2.c's
# format holds the family, and one line naming what it cannot hold where it does not; Mistral's
# sliding window refused by a run whose context it does not cover; unsupported architectures and
# config fields that disagree with the tensors refused in one line, exit 2.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"
mk() {  # mk FAMILY NAME [key=value ...]: a float32 folder at $T/NAME with the embedded tok512 as tokenizer.json
  local family=$1 name=$2; shift 2
  $PY "$SRC/python/tests/hf_folders.py" "$family" F32 "$T/$name" vocab_size=512 "$@" && cp "$T/hf/tokenizer.json" "$T/$name/"
}
edit() {  # edit NAME JSON: config.json of $T/NAME updated with JSON's fields (the tensors unchanged)
  $PY -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c.update(json.loads(sys.argv[2])); json.dump(c,open(p,'w'))" "$T/$1/config.json" "$2"
}
same_npy() { $PY -c "import numpy as np,sys; print(bool((np.load(sys.argv[1]) == np.load(sys.argv[2])).all()))" "$1" "$2"; }
json_get() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }
"$KVCIM" convert --out "$T/hf" 2>/dev/null  # the embedded model: its tokenizer.json for the folders below

# --- kvcim run on a Qwen3 folder, default hardware ----------------------------------------------
mk qwen3 qwen3 max_position_embeddings=128
mk qwen3 qwen3_16 max_position_embeddings=128 head_dim=16
"$KVCIM" run --model "$T/qwen3" --steps 24 --json "$T/q3.json" >/dev/null 2>"$T/err"
check "run --model Qwen3 folder: exit 0" "0" "$?"
check "run: CIM top-1 agrees with the float reference at every step" "1.0" "$(json_get "$T/q3.json" "d['accuracy']['top1_agreement']")"
"$KVCIM" run --model "$T/qwen3_16" --steps 24 --eval-text "" --json "$T/q16.json" >/dev/null 2>"$T/err"
check "run: KV cell writes per token follow head_dim (32 against 16)" "2.0" \
  "$($PY -c "import json,sys; a,b=(json.load(open(f))['mapping']['kv_cell_writes_per_token'] for f in sys.argv[1:]); print(a/b)" "$T/q3.json" "$T/q16.json")"
"$KVCIM" map --model "$T/qwen3" --json "$T/m.json" >/dev/null
check "map --model Qwen3 folder: the model's head_dim" "32 4 64" "$(json_get "$T/m.json" "' '.join(str(d['model'][k]) for k in ('head_dim', 'heads', 'dim'))")"

# --- Mistral: the window against the run's context ----------------------------------------------
mk mistral mistral rope_theta=10000.0 rms_norm_eps=1e-5
bad "run: a sliding window shorter than the run" "sliding_window = 5" "run's context of 32" -- run --model "$T/mistral" --steps 8 --json "$T/bad.json"
"$KVCIM" run --model "$T/mistral" --steps 5 --eval-text "" --json "$T/w.json" >/dev/null 2>"$T/err"
check "run: a window covering the run (5 steps, window 5): exit 0" "0" "$?"
"$KVCIM" logits --model "$T/mistral" --tokens 1,17,254,3,99,42,42,7 --out "$T/w.npy" 2>"$T/err"
check "logits of a Mistral folder longer than its window: exit 0" "0" "$?"

# --- kvcim convert both ways where llama2.c's format holds the family ---------------------------
mk mistral mistral_full rope_theta=10000.0 rms_norm_eps=1e-5 sliding_window=null
mk llama llama_hd rope_theta=10000.0 rms_norm_eps=1e-5 head_dim=16 tie_word_embeddings=true
for f in mistral_full llama_hd; do
  "$KVCIM" convert --model "$T/$f" --out "$T/$f.bin" 2>"$T/err"
  check "convert $f -> .bin: exit 0" "0" "$?"
  "$KVCIM" logits --model "$T/$f" --tokens 1,17,254,3,99,42,42,7 --out "$T/a.npy" 2>/dev/null
  "$KVCIM" logits --model "$T/$f.bin" --tokens 1,17,254,3,99,42,42,7 --out "$T/b.npy" 2>/dev/null
  check "convert $f -> .bin: identical logits" "True" "$(same_npy "$T/a.npy" "$T/b.npy")"
  "$KVCIM" convert --model "$T/$f.bin" --tokenizer none --out "$T/$f.back" 2>"$T/err"
  "$KVCIM" logits --model "$T/$f.back" --tokens 1,17,254,3,99,42,42,7 --out "$T/c.npy" 2>/dev/null
  check "convert $f -> .bin -> folder: identical logits" "True" "$(same_npy "$T/a.npy" "$T/c.npy")"
done
mk qwen2 qwen2
mk llama scaled 'rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}'
bad "convert Qwen3 -> .bin" "qwen3" "Qwen3ForCausalLM with head_dim = 32" "cannot hold it" -- convert --model "$T/qwen3" --out "$T/out.bin"
bad "convert Qwen3 (head_dim 16) -> .bin" "Qwen3ForCausalLM with q/k norms" -- convert --model "$T/qwen3_16" --out "$T/out.bin"
bad "convert Qwen2 -> .bin" "Qwen2ForCausalLM with attention biases" -- convert --model "$T/qwen2" --out "$T/out.bin"
bad "convert rope_scaling -> .bin" "LlamaForCausalLM with rope_scaling" -- convert --model "$T/scaled" --out "$T/out.bin"
bad "convert Mistral with a window -> .bin" "MistralForCausalLM with sliding_window = 5" -- convert --model "$T/mistral" --out "$T/out.bin"

# --- bad folders ---------------------------------------------------------------------------------
mk llama gpt2 && edit gpt2 '{"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"}'
bad "unsupported architecture" "architectures" "GPT2LMHeadModel" "supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM" -- run --model "$T/gpt2" --json "$T/bad.json"
mk llama layers && edit layers '{"num_hidden_layers": 3}'
bad "config field against the tensors" "layers/config.json" "num_hidden_layers = 3" "the tensors say 2" -- run --model "$T/layers" --json "$T/bad.json"
mk qwen3 hd && edit hd '{"head_dim": 64}'
bad "head_dim against the tensors" "hd/config.json" "head_dim = 64" "the tensors say 32" -- logits --model "$T/hd" --tokens 1 --out "$T/out.npy"
mk llama heads && edit heads '{"head_dim": 8}'
bad "heads x head_dim against the tensors" "heads/config.json" "num_attention_heads x head_dim = 4 x 8 = 32" "the tensors say 64" -- logits --model "$T/heads" --tokens 1 --out "$T/out.npy"
finish "Hugging Face architectures"
