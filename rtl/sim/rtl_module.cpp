// A configuration of the Verilated tile as a loadable module (kvcim_rtl_tile_<config>.so): its one
// exported symbol describes the tile it builds and how to make one and its co-simulation against the C model (kvcim/rtl/rtl_tiles.hpp). Linked
// with everything else hidden, so that its harness and model never meet another configuration's.
#include "kvcim/rtl/rtl_tiles.hpp"
#include "kvcim/rtl/rtl_tile.hpp"
#include "kvcim/rtl/cosim_job.hpp"

extern "C" __attribute__((visibility("default"))) const kvcim::rtl::RtlModuleV1* kvcim_rtl_module_v1() {
  static const kvcim::rtl::RtlModuleV1 module{
      kvcim::rtl::kRtlModuleAbi, sizeof(kvcim::cmodel::cim::TileParams),
      kvcim::rtl::RtlTile::built_params(),
      []() -> std::unique_ptr<kvcim::cmodel::cim::AttentionTile> {
        return std::make_unique<kvcim::rtl::RtlTile>();
      },
      &kvcim::rtl::cosim_job};
  return &module;
}
