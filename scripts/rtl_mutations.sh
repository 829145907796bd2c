#!/usr/bin/env bash
# Hand mutations of the RTL, each a small edit a designer could make by mistake, and which of the
# default checks catches it. Not part of `make test`: each mutation re-Verilates the models.
#
#   scripts/rtl_mutations.sh [NAME...]      (default: every mutation below)
#
# A scratch copy of the worktree (without its build folders) is configured once in
# $KVCIM_MUTATION_DIR (default /tmp/kvcim-mutations); for each mutation its rtl/ is restored, the
# edit applied (a mutation whose pattern no longer matches is reported, not run), the RTL models,
# test_rtl, the table's tests and modules and kvcim rebuilt, and then run:
#   rtl            the rtl suite (test_rtl: directed, random, port stress, assertions, kvcim cosim)
#   rtl_config.X   each configuration's test
#   cosim          `kvcim cosim` with its defaults (every configuration)
# Each line of the table: the mutation, then the checks that failed (or "NOT CAUGHT").
# Needs the tools `make build` needs; about 3-5 minutes per mutation on 2 cores.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=${KVCIM_MUTATION_DIR:-/tmp/kvcim-mutations}
jobs=${JOBS:-2}
src=$work/src
build=$work/build
pristine=$work/rtl.pristine

# name # file (under rtl/) # sed expression # what it models
mutations=(
  "same_cycle_query#cim_attention_tile.sv#s/assign q_ready_o = idle \&\& k_cmp_ready \&\& !app_valid_i;/assign q_ready_o = idle \&\& k_cmp_ready;/#a query accepted while an append is offered in the same cycle"
  "weak_app_payload_assert#cim_attention_tile_assertions.sv#s/\$stable({app_k_i, app_v_i, app_ek_i, app_ev_i})/\$stable({app_k_i, app_v_i}) \&\& \$stable(app_ek_i) || \$stable(app_ev_i)/#the append-payload assertion weakened by a precedence slip: any change passes while ev is stable"
  "weak_q_payload_assert#cim_attention_tile_assertions.sv#s/\$stable({q_i, qmul_i, qexp_i})/\$stable(q_i) || \$stable({qmul_i, qexp_i})/#the query-payload assertion weakened: q may change while qmul and qexp are stable"
  "divider_last_stage_short#softmax_unit.sv#s/localparam int LO = (HI - DIV_STEP + 1 < 0) ? 0 : HI - DIV_STEP + 1;/localparam int LO = (HI - DIV_STEP + 1 < 0) ? 1 : HI - DIV_STEP + 1;/#the divider's last (partial) stage stops one quotient bit short"
  "column_write_pow2_rows#cim_macro.sv#s/if (32'(wr_row) == ROWS - 1) wr_busy <= 1'b0;/if (wr_row == '1) wr_busy <= 1'b0;/#the column write ends at the all-ones row (right only for a power-of-two row count)"
  "full_tile_accepts#cim_attention_tile.sv#s/assign app_ready_o = idle \&\& k_col_ready \&\& (count != N_BITS'(TOKENS));/assign app_ready_o = idle \&\& k_col_ready;/#a full tile raises app_ready_o"
  "fold_round_half_down#softmax_unit.sv#s/((32'(out_quo) + (32'd1 << (fsh - 1))) >> fsh)/((32'(out_quo) + (32'd1 << (fsh - 1)) - 32'd1) >> fsh)/#the V-exponent fold rounds ties down"
  "rescale_round_half_down#softmax_unit.sv#s/rnd = (sh == 0) ? 64'sd0 : (64'sd1 <<< (sh - 1));/rnd = (sh == 0) ? 64'sd0 : (64'sd1 <<< (sh - 1)) - 64'sd1;/#the logit rescale rounds ties down"
  "divider_strict_compare#softmax_unit.sv#s/if (rem >= {1'b0, sum}) begin/if (rem > {1'b0, sum}) begin/#the restoring divider subtracts only when the remainder exceeds the divisor"
  "result_not_held#cim_attention_tile.sv#s/VCOMP: if (res_fire) state <= IDLE;/VCOMP: if (res_fire || res_valid_o) state <= IDLE;/#the result is dropped after one cycle whether or not it was taken"
  "stall_cycles_counted#cim_attention_tile.sv#s/wire stalled = res_valid_o \&\& !res_ready_i;/wire stalled = 1'b0;/#the cycle counter counts cycles stalled on the result"
  "count_on_offer#cim_attention_tile.sv#s/if (app_fire) count <= count + 1'b1;/if (app_valid_i \&\& idle) count <= count + 1'b1;/#the token count advances on an offered append, accepted or not"
  "k_compute_on_append#cim_attention_tile.sv#s/.cmp_valid_i(q_valid_i \&\& idle \&\& !app_valid_i)/.cmp_valid_i(q_valid_i \&\& idle)/#the K macro starts a query's compute while an append takes the same cycle (the query is not accepted)"
)

configs=$(sed -n 's/^ *"\(hd[0-9a-z_]*\):.*/\1/p' "$repo/testbench/tests/rtl_configs/rtl_configs.cmake")

mkdir -p "$work"
echo "scratch copy in $src" >&2
rm -rf "$src" && mkdir -p "$src"
(cd "$repo" && tar --exclude=./.git --exclude='./build*' -cf - .) | tar -xf - -C "$src"
# No Yosys in the scratch build: the gate-level netlist is synthesised from the RTL, not a check
# of it, and each mutation would start a new synthesis.
sed -i 's/^find_program(KVCIM_YOSYS yosys)/set(KVCIM_YOSYS "")/' "$src/rtl/rtl.cmake"
rm -rf "$pristine" && cp -a "$src/rtl" "$pristine"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=${PYTHON:-/usr/bin/python3} >"$work/configure.log" 2>&1 ||
  { echo "configure failed: $work/configure.log" >&2; exit 2; }
targets="test_rtl kvcim"
for c in $configs; do targets="$targets test_rtl_$c kvcim_rtl_tile_$c"; done

selected=("$@")
printf '%-26s %s\n' "mutation" "caught by"
for m in "${mutations[@]}"; do
  IFS='#' read -r name file expr what <<<"$m"
  if [ ${#selected[@]} -gt 0 ] && ! printf '%s\n' "${selected[@]}" | grep -qx "$name"; then continue; fi
  rm -rf "$src/rtl" && cp -a "$pristine" "$src/rtl"
  sed -i "$expr" "$src/rtl/$file"
  if cmp -s "$pristine/$file" "$src/rtl/$file"; then
    printf '%-26s %s\n' "$name" "(does not apply: pattern not found in rtl/$file)"
    continue
  fi
  log=$work/$name.log
  : >"$log"
  if ! cmake --build "$build" -j "$jobs" --target $targets >>"$log" 2>&1; then
    printf '%-26s %s\n' "$name" "the build (Verilator or C++): $log"
    continue
  fi
  caught=""
  failed=$(timeout 600 "$build/test_rtl" --gtest_brief=1 2>&1 | tee -a "$log" | sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_./]*\).*/\1/p' | sort -u | tr '\n' ' ')
  [ -n "$failed" ] && caught="$caught rtl($failed)"
  for c in $configs; do
    if ! timeout 600 "$build/test_rtl_$c" --gtest_brief=1 >>"$log" 2>&1; then caught="$caught rtl_config.$c"; fi
  done
  timeout 600 "$build/kvcim" cosim >"$log.cosim" 2>&1
  rc=$?
  [ $rc -ne 0 ] && caught="$caught cosim(exit $rc: $(grep -E '^hd[^:]*: trials.*FAILED' "$log.cosim" | sed 's/: trials.*//' | tr '\n' ' '))"
  printf '%-26s %s\n' "$name" "${caught:- NOT CAUGHT}"
done
rm -rf "$src/rtl" && cp -a "$pristine" "$src/rtl"
