// A tensor-core dot's k loop on mma.sync, written to a CodeWriter (the emitter's work-group dots,
// emitter_work_group_dot.cpp, decide which dots and where the operands lie).
//
// In: the tile layout of the dot's result (an mma one: lower/program_layout.h), the names of its
// accumulator slots and of the staged operands with their layouts. Out: the loop over k that loads
// each warp's a and b fragments (ldmatrix from 16-bit operands, pairs of floats packed, or a's
// fragments packed from the registers that hold it) and issues NT_MMA_M16N8K16_<type> (16-bit) or
// NT_MMA_M16N8K8_tf32 (float32 as TF32, or tf32x3: three products) for every 16 x 8 tile of the
// warp's (mma_ptx.h defines them).
#pragma once

#include <array>
#include <functional>
#include <string>

#include "codegen/c/code_writer.h"
#include "codegen/c/mma_operands.h"

namespace nt::codegen {

// The k loop of a 16-bit dot (`type` f16 or bf16) into the slots `acc` of tile layout `layout`,
// whose lane coordinates are `tx`, `ty`. `pairs`: a's rows are padded and aligned, read two floats
// at a time; `a16`, `b16`: staged in their own type (16-bit: ldmatrix); `bt`: b as rows of n;
// `held`: a's fragments read from registers instead (Emitter::registers_of_a()).
struct MmaSteps {
  std::string type;
  int layout = 0;
  std::string tx, ty, acc, A, B, K;
  StagedLayout la, lb;
  bool pairs = false, a16 = false, b16 = false, bt = false;
  const HeldOperand* held = nullptr;
  std::string local_pointer;  // the dialect's qualifier of a work-group memory pointer
};
void write_mma_steps(CodeWriter& out, const MmaSteps& steps);

// The k loop of a TF32 dot (float32 operands; `x3`: tf32x3), its fragments read as floats from `A`
// and `B` (rows `pitch_a`, `pitch_b` apart).
struct Tf32Steps {
  bool x3 = false;
  int layout = 0;
  std::string tx, ty, acc, A, B, K, pitch_a, pitch_b;
};
void write_tf32_steps(CodeWriter& out, const Tf32Steps& steps);

// Register r (0 to 3) of the a fragment of the warp's nt_i-th 16 rows at step nt_k0 of k, packed
// from the held a's slots (C: nt_pack_<type>x2 of two of them); mma.sync's and wgmma's alike.
std::string held_a_register(const HeldOperand& held, const std::string& type, int r);

// For each 16 x 8 tile (nt_i, nt_j) of the warp's in tile layout `layout` (an mma one): `body` with
// the tile's four accumulator slots of `acc`, as the mma macros take them.
using MmaSlots = std::array<std::string, 4>;
void write_mma_tiles(CodeWriter& out, int layout, const std::string& acc,
                     const std::function<void(const MmaSlots& slots)>& body);

}  // namespace nt::codegen
