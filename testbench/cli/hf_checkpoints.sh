#!/usr/bin/env bash
# Hugging Face folders through the kvcim command: `kvcim convert` of the embedded model to a
# folder and back; --model DIR in generate, logits, tokenize, explain and map gives what the .bin
# gives; bad folders get one line on stderr naming the file and the field, exit code 2, and
# nothing written.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"

# --- the embedded model as a Hugging Face folder, and back ------------------------------------
"$KVCIM" convert --out "$T/hf" 2>"$T/err"
check "convert .bin -> folder: exit 0" "0" "$?"
check "convert .bin -> folder: its files" "config.json model.safetensors tokenizer.json" "$(ls "$T/hf" | paste -sd' ')"
check "convert: no temporary folder left" "" "$(ls -d "$T"/*partial* 2>/dev/null)"
want=$("$KVCIM" generate --prompt "Once upon a time" --steps 80 --temperature 0)
check "generate --model DIR (its tokenizer.json) = generate on the .bin" "$want" "$("$KVCIM" generate --model "$T/hf" --prompt "Once upon a time" --steps 80 --temperature 0)"
check "tokenize --tokenizer DIR = tokenize on tok512" "$("$KVCIM" tokenize --text "Lily and Tom went to the park.")" "$("$KVCIM" tokenize --tokenizer "$T/hf" --text "Lily and Tom went to the park.")"
"$KVCIM" logits --tokens 1,403,407,261,378 --out "$T/a.npy" && "$KVCIM" logits --model "$T/hf" --tokens 1,403,407,261,378 --out "$T/b.npy"
check "logits --model DIR identical to the .bin's" "True" "$($PY -c "import numpy as np,sys; print(bool((np.load(sys.argv[1]) == np.load(sys.argv[2])).all()))" "$T/a.npy" "$T/b.npy")"
"$KVCIM" map --model "$T/hf" --json "$T/m1.json" >/dev/null && "$KVCIM" map --json "$T/m2.json" >/dev/null
check "map --model DIR: the same model shape" "True" "$($PY -c "import json,sys; a,b=(json.load(open(f))['model'] for f in sys.argv[1:]); a.pop('name'); b.pop('name'); print(a==b)" "$T/m1.json" "$T/m2.json")"
"$KVCIM" run --quiet --eval-text "" --eval-tokens 50 --steps 8 --json "$T/r1.json" >/dev/null && "$KVCIM" run --quiet --eval-text "" --eval-tokens 50 --steps 8 --model "$T/hf" --json "$T/r2.json" >/dev/null
check "run --model DIR: the same accuracy and energy as on the .bin" "True" "$($PY -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); print(a['accuracy']==b['accuracy'] and a['energy']==b['energy'])" "$T/r1.json" "$T/r2.json" 2>&1)"
"$KVCIM" explain --model "$T/hf" --steps 6 >/dev/null 2>"$T/err"
check "explain --model DIR: exit 0" "0" "$?"
"$KVCIM" convert --model "$T/hf" --out "$T/back.bin" --tokenizer-out "$T/back_tok.bin" 2>"$T/err"
check "convert folder -> .bin: exit 0" "0" "$?"
check "convert folder -> .bin: the same text" "$want" "$("$KVCIM" generate --model "$T/back.bin" --tokenizer "$T/back_tok.bin" --prompt "Once upon a time" --steps 80 --temperature 0)"
"$KVCIM" convert --model "$T/back.bin" --tokenizer none --dtype bf16 --out "$T/hf16" 2>"$T/err"
check "convert --dtype bf16 --tokenizer none: exit 0, no tokenizer.json" "0 config.json model.safetensors" "$? $(ls "$T/hf16" | paste -sd' ')"

# --- bad folders -------------------------------------------------------------------------------
bad "convert onto an existing folder" "--out" "exists" -- convert --out "$T/hf"
bad "convert: unknown dtype" "--dtype" "f64" -- convert --out "$T/out_x" --dtype f64
mk() {  # mk NAME: a copy of the good folder at $T/NAME
  rm -rf "$T/$1"; cp -r "$T/hf" "$T/$1"
}
# edit the safetensors header of $T/$1 with Python code acting on `h` (dict) / `n` (length field)
edit_header() {
  $PY - "$T/$1/model.safetensors" "$2" <<'PYEOF'
import json, struct, sys
path, code = sys.argv[1], sys.argv[2]
b = open(path, "rb").read()
n = struct.unpack_from("<Q", b)[0]
h = json.loads(b[8:8 + n])
data = b[8 + n:]
exec(code)
text = json.dumps(h).encode()
if "n_override" in dir(): n2 = n_override
else: n2 = len(text)
open(path, "wb").write(struct.pack("<Q", n2) + text + data)
PYEOF
}
mk hdr; edit_header hdr "n_override = 10**9"
bad "safetensors header longer than the file" "hdr/model.safetensors" "header length" "1000000000" -- generate --prompt x --model "$T/hdr"
mk dt; edit_header dt "h['model.norm.weight']['dtype'] = 'F64'"
bad "safetensors unknown dtype" "dt/model.safetensors" "model.norm.weight" "dtype" "F64" -- logits --tokens 1 --model "$T/dt" --out "$T/out.npy"
mk ov; edit_header ov "h['model.norm.weight']['data_offsets'] = [0, 256]"
bad "safetensors overlapping offsets" "ov/model.safetensors" "data_offsets" "overlaps" -- generate --prompt x --model "$T/ov"
mk oor; edit_header oor "e = h['lm_head.weight'] if 'lm_head.weight' in h else h['model.norm.weight']; e['data_offsets'] = [e['data_offsets'][0] + 10**6, e['data_offsets'][1] + 10**6]"
bad "safetensors offsets beyond the file" "oor/model.safetensors" "data_offsets" "beyond" -- generate --prompt x --model "$T/oor"
mk miss; edit_header miss "del h['model.layers.3.mlp.up_proj.weight']"
bad "missing tensor" "miss" "model.layers.3.mlp.up_proj.weight" "missing" -- generate --prompt x --model "$T/miss"
mk shp; $PY -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['intermediate_size']=100; json.dump(c,open(p,'w'))" "$T/shp/config.json"
bad "tensor shape disagreeing with config.json" "shp/config.json" "intermediate_size = 100" "the tensors say 172" "gate_proj.weight" -- generate --prompt x --model "$T/shp"
mk arch; $PY -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['architectures']=['GPT2LMHeadModel']; c.pop('model_type'); json.dump(c,open(p,'w'))" "$T/arch/config.json"
bad "config.json of another architecture" "arch/config.json" "architectures" "GPT2LMHeadModel" -- convert --model "$T/arch" --out "$T/out.bin"
mk fld; $PY -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c.pop('num_hidden_layers'); json.dump(c,open(p,'w'))" "$T/fld/config.json"
bad "config.json missing a field" "fld/config.json" "num_hidden_layers" "missing" -- map --model "$T/fld"
mk uni; $PY -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['model']['type']='Unigram'; json.dump(c,open(p,'w'))" "$T/uni/tokenizer.json"
bad "tokenizer.json of model type Unigram" "uni/tokenizer.json" "model.type" "Unigram" -- generate --prompt x --model "$T/uni"
mk wp; $PY -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['model']['type']='WordPiece'; json.dump(c,open(p,'w'))" "$T/wp/tokenizer.json"
bad "tokenizer.json of model type WordPiece" "wp/tokenizer.json" "model.type" "WordPiece" -- tokenize --text x --tokenizer "$T/wp/tokenizer.json"
bad "convert: bad input writes no folder" "uni/tokenizer.json" "model.type" -- convert --model "$T/back.bin" --tokenizer "$T/uni/tokenizer.json" --out "$T/out_hf"
# --- real tokenizers (testdata/tokenizers, unpacked into the build folder beside kvcim by the
# build of test_hf) ----------------------------------------------------------------------------
TOKS=$(dirname "$KVCIM")/testdata/tokenizers
check "tokenize with Llama-3's folder: <|begin_of_text|> (TemplateProcessing), then the text" "128000,9906,1917" "$("$KVCIM" tokenize --tokenizer "$TOKS/llama3" --text "Hello world")"
check "tokenize with Qwen3's folder: no BOS, <|im_start|> matched as one token" "151644,872,198,9707" "$("$KVCIM" tokenize --tokenizer "$TOKS/qwen3" --text $'<|im_start|>user\nHello')"
check "tokenize with Mistral's folder: <s> and </s> in the text are special tokens" "1,1,22557,2" "$("$KVCIM" tokenize --tokenizer "$TOKS/mistral" --text "<s>Hello</s>")"
mkdir -p "$T/nfkc"; cp "$TOKS/qwen3/tokenizer_config.json" "$T/nfkc/"
$PY -c "import json,sys; c=json.load(open(sys.argv[1])); c['normalizer']={'type':'NFKC'}; json.dump(c,open(sys.argv[2],'w'))" "$TOKS/qwen3/tokenizer.json" "$T/nfkc/tokenizer.json"
bad "tokenizer.json with a normalizer not supported" "nfkc/tokenizer.json" "normalizer = NFKC" "not supported" -- tokenize --text x --tokenizer "$T/nfkc"
finish "Hugging Face checkpoint"
