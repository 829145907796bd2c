#!/usr/bin/env bash
# Determinism through the kvcim command: the same inputs and seeds give byte-identical JSON (and
# .npy) outputs, run after run and with one or two threads; a different seed gives a different
# report (so the comparison can fail); the evaluation (sampled corpus, two lanes, bootstrap) is part
# of the report. Sampling at temperature > 0 with an analog spec makes the
# seeded parts (sampler, ADC noise when the spec has any) take part.
set -u
KVCIM=$1; SRC=$2
source "$(dirname "$0")/lib/common.sh"
same() { cmp -s "$2" "$3" && check "$1" same same || check "$1" same "differ: $(cmp "$2" "$3" 2>&1 | head -1)"; }

RUN=(run --quiet --steps 24 --temperature 0.8 --top-p 0.9 --hw "$SRC/configs/hw/sram_analog.yaml"
     --eval-text "$SRC/testdata/eval/tinystories_eval.txt" --eval-tokens 2000)
"$KVCIM" "${RUN[@]}" --seed 7 --threads 2 --json "$T/a.json" >/dev/null || check "run a" 0 $?
"$KVCIM" "${RUN[@]}" --seed 7 --threads 2 --json "$T/b.json" >/dev/null || check "run b" 0 $?
"$KVCIM" "${RUN[@]}" --seed 7 --threads 1 --json "$T/c.json" >/dev/null || check "run c" 0 $?
"$KVCIM" "${RUN[@]}" --seed 8 --threads 2 --json "$T/d.json" >/dev/null || check "run d" 0 $?
same "run --json: byte-identical run after run" "$T/a.json" "$T/b.json"
same "run --json: byte-identical with 1 and 2 threads" "$T/a.json" "$T/c.json"
cmp -s "$T/a.json" "$T/d.json"; check "run --json: another seed gives another report" 1 $?
# the analog KV tiles' noise: each backend numbers its tiles' seeds itself (a shared count made
# the evaluation lanes' tiles depend on thread timing)
GCRUN=(run --quiet --steps 24 --hw "$SRC/configs/hw/gain_cell_kv.yaml" --eval-tokens 1500)
"$KVCIM" "${GCRUN[@]}" --threads 2 --json "$T/g1.json" >/dev/null || check "gain-cell run 1" 0 $?
"$KVCIM" "${GCRUN[@]}" --threads 2 --json "$T/g2.json" >/dev/null || check "gain-cell run 2" 0 $?
"$KVCIM" "${GCRUN[@]}" --threads 1 --json "$T/g3.json" >/dev/null || check "gain-cell run 3" 0 $?
same "run --json, analog KV tiles: byte-identical run after run" "$T/g1.json" "$T/g2.json"
same "run --json, analog KV tiles: byte-identical with 1 and 2 threads" "$T/g1.json" "$T/g3.json"

"$KVCIM" map --hw "$SRC/configs/hw/reram_analog.yaml" --json "$T/m1.json" >/dev/null
"$KVCIM" map --hw "$SRC/configs/hw/reram_analog.yaml" --json "$T/m2.json" >/dev/null
same "map --json: byte-identical" "$T/m1.json" "$T/m2.json"

"$KVCIM" logits --tokens 1,403,407,112,261 --out "$T/l1.npy"
"$KVCIM" logits --tokens 1,403,407,112,261 --out "$T/l2.npy"
same "logits .npy: byte-identical" "$T/l1.npy" "$T/l2.npy"

"$KVCIM" generate --prompt "Once upon a time" --steps 40 --temperature 1.0 --seed 3 > "$T/g1.txt"
"$KVCIM" generate --prompt "Once upon a time" --steps 40 --temperature 1.0 --seed 3 > "$T/g2.txt"
same "generate with sampling: identical text for one seed" "$T/g1.txt" "$T/g2.txt"

finish determinism
