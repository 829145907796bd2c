#!/usr/bin/env bash
# Bad input through the kvcim command: one line on stderr naming the file/option and the field,
# exit code 2, no output file. Non-UTF-8 text is not bad input: byte fallback encodes any bytes.
# (Cases already covered by model_commands.sh and map_command.sh are not repeated here; the list
# of all of them, with the test that proves each, is docs/reliability.md.)
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"
RUN=(run --quiet --eval-text "" --steps 8)

# --- checkpoints -----------------------------------------------------------------------------
$PY - "$T" <<'PYEOF'
import struct, sys
t = sys.argv[1]
# header whose products overflow int64 (each field within its own limit)
open(f"{t}/overflow.bin", "wb").write(struct.pack("<7i", 1 << 24, 1 << 24, 1 << 24, 1 << 22, 1 << 22, 1 << 24, 1 << 24))
# small model, absurd context: a KV cache of 2^36 floats
open(f"{t}/kv.bin", "wb").write(struct.pack("<7i", 2048, 1, 1, 1024, 1024, 1, 1 << 24))
PYEOF
$PY - "$SRC/models/stories260K.bin" "$T/nan.bin" <<'PYEOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
b[28 + 4 * 1000: 28 + 4 * 1001] = struct.pack("<f", float("nan"))  # inside token_embedding
open(sys.argv[2], "wb").write(b)
PYEOF
bad "checkpoint sizes overflowing int64" "overflow.bin" "tensor sizes" -- generate --prompt x --model "$T/overflow.bin"
bad "checkpoint with an absurd KV cache" "kv.bin" "seq_len" -- generate --prompt x --model "$T/kv.bin"
bad "checkpoint with a NaN weight" "nan.bin" "token_embedding" "finite" -- generate --prompt x --model "$T/nan.bin"
bad "empty checkpoint" "empty.bin" "header" -- generate --prompt x --model "$(: > "$T/empty.bin"; echo "$T/empty.bin")"
bad "checkpoint is a directory" "$T" -- generate --prompt x --model "$T"

# --- tokenizers ------------------------------------------------------------------------------
$PY - "$SRC/models/tok512.bin" "$T" <<'PYEOF'
import struct, sys
src, t = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
# walk the entries to cut or extend the vocabulary
off, ends = 4, []
while off < len(data):
    n = struct.unpack_from("<i", data, off + 4)[0]
    off += 8 + n
    ends.append(off)
open(f"{t}/tok400.bin", "wb").write(data[:ends[399]])
extra = b"".join(struct.pack("<fi", -1e9, 3) + b"zz%c" % (65 + i % 26) for i in range(88))
open(f"{t}/tok600.bin", "wb").write(data + extra)
absurd = bytearray(data)
struct.pack_into("<i", absurd, ends[299] + 4, 1 << 30)  # entry 300's length
open(f"{t}/tok_absurd.bin", "wb").write(absurd)
PYEOF
bad "tokenizer smaller than the model's vocabulary" "tok400.bin" "entry 400" -- generate --prompt x --tokenizer "$T/tok400.bin"
bad "tokenizer larger than the model's vocabulary" "tok600.bin" "vocab" -- generate --prompt x --tokenizer "$T/tok600.bin"
bad "tokenizer entry of absurd length" "tok_absurd.bin" "entry 300 length = 1073741824" -- tokenize --text x --tokenizer "$T/tok_absurd.bin"
bad "run: tokenizer of another vocabulary" "tok600.bin" -- "${RUN[@]}" --tokenizer "$T/tok600.bin"

# --- text that is not UTF-8: encoded by byte fallback, never refused -------------------------
ids=$("$KVCIM" tokenize --text $'\xff\xfe' 2>"$T/err"); rc=$?
check "tokenize non-UTF-8: exit 0" "0" "$rc"
check "tokenize non-UTF-8: bytes 0xFF 0xFE as byte pieces 258, 257" "258,257" "$(echo "$ids" | awk -F, '{print $(NF-1)","$NF}')"
"$KVCIM" generate --prompt $'caf\xe9 \xc3\x28 \xed\xa0\x80' --steps 24 --temperature 0 >"$T/gen.txt" 2>"$T/err"
check "generate with a non-UTF-8 prompt: exit 0" "0" "$?"
"$KVCIM" "${RUN[@]}" --prompt $'Once \xff\xfe upon' --json "$T/u.json" >/dev/null 2>"$T/err"
check "run with a non-UTF-8 prompt: exit 0" "0" "$?"
check "run with a non-UTF-8 prompt: the report is valid JSON" "ok" "$($PY -c "import json,sys; json.load(open(sys.argv[1])); print('ok')" "$T/u.json" 2>&1 | tail -1)"
# JSON text is UTF-8: the invalid bytes of the prompt are shown as U+FFFD (the ids are exact)
check "run with a non-UTF-8 prompt: invalid bytes become U+FFFD in the report" "True" "$($PY -c "import json,sys; print('Once \ufffd\ufffd upon' in json.dumps(json.load(open(sys.argv[1])), ensure_ascii=False))" "$T/u.json" 2>&1 | tail -1)"
printf 'The cat sat \xff\xfe on the mat.' > "$T/eval.txt"
"$KVCIM" run --quiet --steps 8 --eval-text "$T/eval.txt" --json "$T/e.json" >/dev/null 2>"$T/err"
check "run with a non-UTF-8 evaluation text: exit 0" "0" "$?"

# --- context ---------------------------------------------------------------------------------
long=$(for i in $(seq 1 400); do printf 'the dog and the cat '; done)
bad "generate: prompt longer than the context" "prompt tokens" -- generate --prompt "$long" --steps 512
bad "run: prompt longer than the run" "prompt tokens" -- "${RUN[@]}" --prompt "$long"
bad "run: steps beyond the context" "steps" "512" -- run --quiet --eval-text "" --steps 513
bad "logits: more tokens than the context" "context" -- logits --tokens "$(yes 1 | head -513 | paste -sd,)" --out "$T/out.npy"
bad "run: zero steps" "--steps" "steps = 0" -- run --quiet --eval-text "" --steps 0
bad "run: zero evaluation tokens" "--eval-tokens" "eval_tokens = 0: expected at least 1" -- run --quiet --steps 8 --eval-tokens 0 --json "$T/out.json"
bad "run: negative evaluation tokens, evaluation skipped" "--eval-tokens" "eval_tokens = -3" -- "${RUN[@]}" --eval-tokens -3
bad "run: evaluation tokens not a number" "--eval-tokens" "abc" -- "${RUN[@]}" --eval-tokens abc

# --- hardware specs --------------------------------------------------------------------------
HW=$SRC/configs/hw/sram_digital.yaml
# edited copies in $T/hw, beside links to the shipped tables and macros, so that ../tech/ and
# ../macros/ paths resolve
mkdir -p "$T/hw" && ln -s "$SRC/configs/tech" "$T/tech" && ln -s "$SRC/configs/macros" "$T/macros"
sed 's/^  macros: 1024/  macros: 2/' "$HW" > "$T/hw/tiny.yaml"
bad "run: spec too small for the model under the fail policy" "overflow=fail" "try overflow=spill" -- "${RUN[@]}" --hw "$T/hw/tiny.yaml" --policy overflow=fail --json "$T/out.json"
bad "run: window sinks not below the window" "sinks" "fewer tokens than the window" -- "${RUN[@]}" --policy window=64,sinks=64 --json "$T/out.json"
bad "run: spill over pages smaller than the tile" "page" "under overflow=spill" -- "${RUN[@]}" --policy overflow=spill,page=16 --json "$T/out.json"
bad "run: a token window larger than the chip gives a stream" "window = 100000 tokens" "holds its whole window" -- "${RUN[@]}" --policy window=100000,granularity=token --json "$T/out.json"
bad "run: H2O's sinks and recent tokens fill the token window" "recent" "at least one heavy-hitter token" -- "${RUN[@]}" --policy window=16,sinks=4,evict=h2o,granularity=token,recent=12 --json "$T/out.json"
bad "run: token eviction on the RTL tile" "--attention-backend" "cannot overwrite a token's slot" -- "${RUN[@]}" --policy window=16,sinks=4,granularity=token --attention-backend rtl --json "$T/out.json"
bad "run: an unknown eviction rule" "evict" "did you mean 'h2o'" -- "${RUN[@]}" --policy window=128,evict=h20 --json "$T/out.json"
bad "run: window on the reference attention" "--policy" "overflow" "use attention_backend = cim or rtl" -- "${RUN[@]}" --policy window=64 --attention-backend reference --json "$T/out.json"
bad "run: a batch of zero sequences" "batch" "sequences = 0" -- "${RUN[@]}" --batch 0 --json "$T/out.json"
bad "run: a batch that disagrees with the prompts" "prompts = 2" "disagrees with 3 sequences" -- "${RUN[@]}" --batch 3 --prompt "Once" --prompt "Tom" --json "$T/out.json"
bad "run: a batch that disagrees with the policy" "policy sequences = 2" -- "${RUN[@]}" --batch 3 --policy sequences=2 --json "$T/out.json"
bad "run: window over pages smaller than the tile" "page" "kvcim run keeps, drops and spills whole attention tiles" -- "${RUN[@]}" --policy window=64,page=32 --json "$T/out.json"
sed 's/^  bytes: 256 KiB/  bytes: 3 ns/' "$HW" > "$T/hw/unit.yaml"
bad "run: spec value of the wrong unit" "unit.yaml" "buffer.bytes = '3 ns'" -- "${RUN[@]}" --hw "$T/hw/unit.yaml"
sed 's/^  rows: 256/  rows: 256\n  rows: 128/' "$HW" > "$T/hw/dup.yaml"
bad "run: spec key given twice" "dup.yaml" "duplicate" -- "${RUN[@]}" --hw "$T/hw/dup.yaml"
sed 's/^name: sram_digital/name: sram\xff\xfe/' "$HW" > "$T/hw/name.yaml"
"$KVCIM" map --hw "$T/hw/name.yaml" --json "$T/n.json" >/dev/null 2>"$T/err"
check "map: a spec name that is not UTF-8 still gives a report (exit 0)" "0" "$?"
check "map: ... and valid JSON" "ok" "$($PY -c "import json,sys; json.load(open(sys.argv[1])); print('ok')" "$T/n.json" 2>&1 | tail -1)"
mkfifo "$T/fifo.yaml"
sed "s|^technology: .*|technology: $T/fifo.yaml|; s|\.\./macros/|$SRC/configs/macros/|" "$HW" > "$T/fifo_tech.yaml"
bad "run: technology path naming a FIFO (a hang before)" "technology" -- "${RUN[@]}" --hw "$T/fifo_tech.yaml"
bad "run: --json into a missing folder" "no/such" -- "${RUN[@]}" --json "$T/no/such/out.json"

# --- technology nodes: every table states its node and supply; one comparison node -------------
mkdir -p "$T/nodes"
grep -v '^node_nm:' "$SRC/configs/tech/digital_45nm.yaml" > "$T/nodes/no_node.yaml"
grep -v '^voltage_v:' "$SRC/configs/tech/digital_45nm.yaml" > "$T/nodes/no_supply.yaml"
sed 's/^node_nm: 45/node_nm: 1/' "$SRC/configs/tech/digital_45nm.yaml" > "$T/nodes/tiny_node.yaml"
for t in no_node no_supply tiny_node; do
  sed "s|^technology: .*|technology: $T/nodes/$t.yaml|" "$HW" > "$T/hw/nodes_$t.yaml"
done
bad "run: technology table without a node" "no_node.yaml" "node_nm" "required" -- "${RUN[@]}" --hw "$T/hw/nodes_no_node.yaml" --json "$T/out.json"
bad "run: technology table without a supply" "no_supply.yaml" "voltage_v" "required" -- "${RUN[@]}" --hw "$T/hw/nodes_no_supply.yaml" --json "$T/out.json"
bad "map: technology table at 1 nm" "tiny_node.yaml" "node_nm = '1'" "3, 180" -- map --hw "$T/hw/nodes_tiny_node.yaml" --json "$T/out.json"
bad "run: --node outside the scaling model" "--node" "node_nm = 2" "3 to 180 nm" -- "${RUN[@]}" --node 2 --json "$T/out.json"
bad "map: --node outside the scaling model" "--node" "node_nm = 500" -- map --node 500 --json "$T/out.json"
bad "map: --node not a number" "--node" -- map --node fast --json "$T/out.json"

# A spec made from $1 by the sed expression $2 that `kvcim map` refuses: $3 says what, the rest
# are the texts its one line must hold.
bad_map_spec() {
  local from=$1 expr=$2 what=$3
  shift 3
  sed "$expr" "$from" > "$T/hw/spec.yaml"
  bad "map: $what" "$@" -- map --hw "$T/hw/spec.yaml" --json "$T/out.json"
}
bad_map_spec "$HW" 's/^baseline:/comparison: {node_nm: 45, voltage_v: 9}\nbaseline:/' "comparison supply outside the model" "comparison" "voltage_v"

# --- the KV tile's kind, widths, converters and noise (kv.*) --------------------------------
GC=$SRC/configs/hw/gain_cell_kv.yaml
bad_map_spec "$GC" 's/^  kind: analog/  kind: analgo/' "unknown kv.kind suggests the closest" "kind" "analgo" "analog"
sed 's/^  k_bits: 8/  k_bits: 9/' "$GC" > "$T/hw/kv_kbits.yaml"
bad "run: kv.k_bits above 8" "k_bits" "9" -- "${RUN[@]}" --hw "$T/hw/kv_kbits.yaml" --json "$T/out.json"
bad_map_spec "$GC" 's/^  v_bits: 8/  v_bits: 1/' "kv.v_bits below 2" "v_bits" "1"
bad_map_spec "$GC" 's/^  k_scale: token/  k_scale: channels/' "unknown kv.k_scale suggests the closest" "k_scale" "channel"
sed 's/^  cell_noise_sigma: 0.05 .*/  cell_noise_sigma: -0.1/' "$GC" > "$T/hw/kv_noise.yaml"
bad "run: negative kv.cell_noise_sigma" "cell_noise_sigma" -- "${RUN[@]}" --hw "$T/hw/kv_noise.yaml" --json "$T/out.json"
bad_map_spec "$GC" 's/^  seed: 1$/  stuck_rate: -0.01\n  seed: 1/' "negative kv.stuck_rate" "stuck_rate"
bad_map_spec "$GC" 's/^  seed: 1$/  stuck_rate: 1.01\n  seed: 1/' "kv.stuck_rate above 1" "stuck_rate"
bad_map_spec "$SRC/configs/hw/reram_analog.yaml" 's/^  read_noise_sigma: 0$/  read_noise_sigma: 0\n  drift_nu: -0.1/' "negative macro.drift_nu" "drift_nu"
bad_map_spec "$SRC/configs/hw/reram_analog.yaml" 's/^  read_noise_sigma: 0$/  read_noise_sigma: 0\n  drift_t0_s: 0/' "macro.drift_t0_s of 0" "drift_t0_s"
bad_map_spec "$SRC/configs/hw/reram_analog.yaml" 's/^  read_noise_sigma: 0$/  read_noise_sigma: 0\n  stuck_rate: 1.5/' "macro.stuck_rate above 1" "stuck_rate"
bad_map_spec "$HW" 's/^  kind: digital$/  kind: digital\n  drift_nu: 0.01/' "drift on a digital macro" "drift_nu" "kind: analog"
bad_map_spec "$GC" 's/^  seed: 1$/  retention_ns: -5\n  seed: 1/' "negative kv.retention_ns" "retention_ns"
bad_map_spec "$GC" 's/^  seed: 1$/  drift_nu: -0.05\n  seed: 1/' "negative kv.drift_nu" "drift_nu"
bad_map_spec "$HW" 's/^  exp_frac: 6$/  exp_frac: 6\n  drift_nu: 0.05/' "KV drift on the digital tile" "drift_nu" "kind: analog"
bad_map_spec "$HW" 's/^  exp_frac: 6$/  exp_frac: 6\n  refresh_ns: 100/' "refresh on the digital tile" "refresh_ns" "kind: analog"
bad_map_spec "$GC" 's/^  adc_clip: 0.125 .*/  adc_clip: 1.5/' "kv.adc_clip above 1" "adc_clip"
bad_map_spec "$GC" 's/^  adc_bits: 10 .*/  adc_bits: 12/' "kv.adc_bits the KV table does not price" "adc" "12"
bad_map_spec "$HW" 's/^  exp_frac: 6$/  exp_frac: 6\n  adc_bits: 8/' "ADC field on a digital KV tile" "adc_bits" "kind: analog"
bad_map_spec "$HW" 's/^  exp_frac: 6$/  exp_frac: 6\n  softmax: relu/' "a per-token softmax on the digital tile" "softmax"
if "$KVCIM" cosim --trials 1 >/dev/null 2>&1; then  # an RTL build
  bad "cosim: zero trials" "--trials" "trials = 0" -- cosim --trials 0
  bad "cosim: tokens beyond the tile" "tokens = 999" -- cosim --tokens 999
  bad "cosim: back-pressure of 1 (never a handshake)" "backpressure" -- cosim --trials 1 --backpressure 1
  bad "run: the RTL backend refuses the analog tile" "kv.kind" "analog" -- "${RUN[@]}" --hw "$GC" --attention-backend rtl --json "$T/out.json"
  sed 's/^  exp_frac: 6$/  exp_frac: 6\n  k_bits: 4/' "$HW" > "$T/hw/kv_k4.yaml"
  bad "run: the RTL backend refuses k_bits != v_bits" "kv.k_bits" "4" -- "${RUN[@]}" --hw "$T/hw/kv_k4.yaml" --attention-backend rtl --json "$T/out.json"
  # (a tile of no built configuration is built on demand: testbench/cli/rtl_build.sh)
  sed 's/^  prob_bits: 12/  prob_bits: 6/' "$HW" > "$T/hw/kv_p6.yaml"
  KVCIM_RTL_CACHE="$T/rtl-cache" bad "run: an RTL tile the RTL cannot be built at" "tile: prob_bits = 6" "the RTL builds prob_bits 7..16" -- "${RUN[@]}" --hw "$T/hw/kv_p6.yaml" --attention-backend rtl --json "$T/out.json"
fi

finish "reliability input"
