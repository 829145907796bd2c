// From a hardware spec and the mapper's placement to what a session needs: the macro, the blocks
// of every matrix, attention tiles of the spec's parameters, the conventional baseline and the
// CIM chip's analytic periphery per position.
#pragma once
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/mapper/placement.hpp"
#include "kvcim/runtime/session.hpp"

namespace kvcim::runtime {

// C-model tiles of the given parameters (cim::make_tile: digital or analog; analog tile i seeded
// with params.seed + i).
TileFactory cmodel_tiles(const cmodel::cim::TileParams& params);

// The placement of `config` on `hw` under `policy`, grown to `context` tokens. kvcim run needs
// every token's K and V in CIM tiles (the runtime simulates them there); a spec too small for
// that is an error that says how much context fits (kvcim map studies the spill and window
// policies analytically).
mapper::Placement place_for_run(const cmodel::Checkpoint& checkpoint, const mapper::HardwareSpec& hw,
                                const mapper::Policy& policy, int context);

// `tiles` builds the attention tiles (cmodel_tiles(hw.tile(head_dim)) or the RTL harness).
SessionHardware session_hardware(const cmodel::Checkpoint& checkpoint,
                                 const mapper::Placement& placement, TileFactory tiles);

}  // namespace kvcim::runtime
