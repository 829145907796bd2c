// The conventional baseline: the same decoder step on a digital engine with int8 or fp16 MACs
// that fetches weights and the KV cache from on-chip SRAM where they fit and from off-chip
// DRAM/HBM otherwise. A pure function of (model shape, position, configuration) -> ledger; the
// costs come from the same technology tables as CIM.
//
// SRAM placement ("where they fit"): the weight matrices in token order (layer 0 q,k,v,o,w1,w2,
// w3, ..., classifier) each take what SRAM is left, bit-granular; then, layer by layer, the KV
// cache takes whole tokens (K and V of a token together, oldest tokens first). The token
// embedding row is read from off-chip memory.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kvcim/cmodel/config.hpp"
#include "kvcim/cmodel/energy/ledger.hpp"
#include "kvcim/spec_fields.hpp"

namespace kvcim::cmodel::energy {

enum class MacType { int8, fp16 };
enum class OffchipKind { dram, hbm };

struct BaselineConfig {
  MacType mac = MacType::int8;
  OffchipKind offchip = OffchipKind::hbm;
  int64_t sram_bytes = 0;   // on-chip SRAM for weights and KV; 0 = everything from off-chip
  // The SRAM is built of banks of this capacity; a bit read costs what one bank of this size
  // costs (tech table curve). 32 KiB: NVDLA's convolution buffer is 16 banks of 32 KiB.
  int64_t sram_bank_bytes = 32 * 1024;
  int64_t mac_units = 1024; // MACs per engine cycle (latency bound only)
  std::string technology;   // the table pricing it (a hardware spec's HardwareSpec::baseline_tech)

  int storage_bits() const { return mac == MacType::int8 ? 8 : 16; }  // weights, KV, inputs
  EventKind mac_event() const {
    return mac == MacType::int8 ? EventKind::int8_mac : EventKind::fp16_mac;
  }
  EventKind offchip_event() const {
    return offchip == OffchipKind::hbm ? EventKind::hbm_bit : EventKind::dram_bit;
  }
  void validate(const std::string& where) const;
};

inline constexpr std::string_view kMacTypeNames[] = {"int8", "fp16"};
inline constexpr std::string_view kOffchipKindNames[] = {"dram", "hbm"};

// The spec's `baseline` section (kvcim/spec_fields.hpp).
constexpr auto spec_fields(const BaselineConfig*) {
  using Self = BaselineConfig;
  using Names = std::span<const std::string_view>;
  return std::tuple{
      ::kvcim::choice_field("mac", &Self::mac, Names(kMacTypeNames), "the engine's MACs (and its storage width)").needed(),
      ::kvcim::choice_field("offchip", &Self::offchip, Names(kOffchipKindNames), "the off-chip memory it fetches from"),
      ::kvcim::range_field("sram", &Self::sram_bytes, 0, 1125899906842624.0, "bytes", "on-chip SRAM for weights and KV; 0 = all off-chip"),
      ::kvcim::range_field("sram_bank", &Self::sram_bank_bytes, 1, 1099511627776.0, "bytes", "capacity of one SRAM bank (its bit price)"),
      ::kvcim::range_field("mac_units", &Self::mac_units, 1, 1073741824.0, "", "MACs per engine cycle (latency bound only)"),
      ::kvcim::path_field("technology", &Self::technology, "configs/tech/*.yaml", "the technology table that prices the engine")
          .needed(),
  };
}

// Probabilities handed to the weighted sum are fp16 on the conventional engine.
inline constexpr int kBaselineProbBits = 16;

// Events of generating the token at `position` (attending over position + 1 tokens) for one
// sequence of `sequences` decoding together: the SRAM left after the weights holds the KV cache of
// every sequence alike (each gets an equal share, layer by layer, oldest tokens first). The
// weight reads are this token's as if it were alone; a batch reads them once per step
// (mapper/batch.hpp divides them). Throws kvcim::Error on an invalid shape, position < 0,
// sequences < 1 or an invalid config.
Ledger baseline_ledger(const Config& shape, int64_t position, const BaselineConfig& cfg,
                       int64_t sequences = 1);

// Roofline-style bound for one token: the engine overlaps memory and compute, so the token
// takes as long as the slowest of off-chip traffic, on-chip memory traffic and compute
// (digital events / mac_units).
struct LatencyBound {
  double offchip_ns = 0, onchip_ns = 0, compute_ns = 0;
  double bound_ns() const;
};
LatencyBound baseline_latency(const Ledger& ledger, const Costs& costs, const BaselineConfig& cfg);

}  // namespace kvcim::cmodel::energy
